/* Target program for testsuite/e2e/run_kernel_aliases.sh (vm.pagefault): maps 4 fresh
 * anonymous pages, writes one byte in page 2 and reads one byte in page 3 (first touches, so
 * each is one page fault), and prints its own record: "write ADDR" and "read ADDR" (hex, the
 * exact addresses touched), then "range BASE END". */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  char *base = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  volatile char *w = base + 2 * pg + 123;
  volatile char *r = base + 3 * pg + 456;
  *w = 1;
  char c = *r;
  printf("write %lx\nread %lx\nrange %lx %lx\n", (unsigned long)w, (unsigned long)r,
         (unsigned long)base, (unsigned long)(base + 4 * pg));
  return c;
}
