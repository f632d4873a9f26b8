/* Built by testsuite/e2e/compat_harness.sh next to examples/t/dwarf.stp: once with -g (the
   probe's $n is servable), once stripped (its $variables need DWARF that is not there). */
__attribute__((noinline)) int work(int n) { return n * 2; }
int main(void) { return work(21) == 42 ? 0 : 1; }
