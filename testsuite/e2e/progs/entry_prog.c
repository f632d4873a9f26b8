/* Target of the @entry checks in testsuite/e2e/run_semantics.sh: a recursive function whose
 * calls nest five deep, and a function called twice with known arguments. The program prints
 * each call's argument and return value as it returns (its own view: the test's truth). */
#include <stdio.h>

__attribute__((noinline, noipa)) long rec(int n)
{
  long r = n > 0 ? n + rec(n - 1) : 0;
  printf("rec n=%d ret=%ld\n", n, r);
  return r;
}

__attribute__((noinline, noipa)) long scale(long x, int k)
{
  long r = x * k;
  printf("scale x=%ld k=%d ret=%ld\n", x, k, r);
  return r;
}

int main(void)
{
  rec(4);
  scale(7, 3);
  scale(-5, 11);
  return 0;
}
