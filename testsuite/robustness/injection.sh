#!/bin/bash
# Text from a traced binary (DWARF names) and from the script reaches the generated C only
# through codegen/c_text.h: a DW_AT_name of "*/ int injected = 42; /*" must not become code.
# Independent truth: the symbol tables of the compiled objects (llvm-objdump -t) and the
# probe's own output of pp(), byte for byte.
. "$(dirname "$0")/../e2e-lib.sh"

NL=$'\n'
HOSTILE='*/ int injected = 42; /* ??/ \ end'
prog=$T_TMP/prog
# #line names the source file of every function below it (the DWARF line table's file names,
# which are the functions' decl_file): pp() of .function("*") shows it as work@FILE:LINE.
cat > "$T_TMP/t.c" <<'C'
#line 1 "*/ int injected = 42; /* ??/ \\ end"
int work(int x) { return x * 2; }
int main(void) { return work(20) - 40; }
C
t_build "the test program" cc -g -O0 -Wno-trigraphs -o "$prog" "$T_TMP/t.c" || { t_done; exit; }
t "the test binary carries the hostile name in its DWARF line table" 0 '~injected = 42;' '' \
  -- sh -c "readelf --debug-dump=line '$prog' | grep -m1 'injected'"

objdump=$(command -v llvm-objdump-14 || command -v llvm-objdump)
export XDG_CACHE_HOME=$T_TMP/cache

# Pass 3 output: the only C comment holding the name is escaped, so `injected` never starts a
# declaration (checked on the text, then on the objects clang makes of it).
SCRIPT="probe process(\"$prog\").function(\"*\") { println(pp()) }"
"$UKSTAP" -p3 -e "$SCRIPT" > "$T_TMP/p3.c" 2>&1
t "pass 3: the DWARF name is escaped in the comment" 0 '*' '' \
  -- grep -qF '/* process(\"'"$prog"'\").function(\"work@\052\057 int injected = 42; \057\052 \?\?/ ' "$T_TMP/p3.c"
# With the comments removed (by the C preprocessor itself), nothing of the name is left.
t "pass 3: no 'injected' outside comments" 1 '' '' \
  -- sh -c "cc -fpreprocessed -E -P '$T_TMP/p3.c' | grep injected"

if t_require_root; then
  # One probe (two would declare `injected` twice and fail to compile on an unescaped tree).
  t "pass 4 compiles" 0 '~\.bpf\.o$' '' \
    -- "$UKSTAP" -p4 -e "probe process(\"$prog\").function(\"work\") { println(\$x) }"
  t "no 'injected' symbol in the compiled objects" 0 '' '' \
    -- sh -c "n=0; for o in \$(find '$XDG_CACHE_HOME' -name '*.o' -o -name '*.so'); do n=\$((n+1)); \
              '$objdump' -t \"\$o\" | grep -w injected; done; [ \$n -ge 1 ]"
  # The run: pp() carries the name back verbatim (the string literal escapes are exact).
  t "the probes fire" 0 '*' '' -- sh -c "'$UKSTAP' -c '$prog' -e '$SCRIPT' > '$T_TMP/run.out'"
  # pp() quotes a backslash as \\ (as stap's probe point syntax does); the rest is verbatim.
  t "pp() reproduces the DWARF name" 0 '*' '' \
    -- grep -qxF "process(\"$prog\").function(\"work@*/ int injected = 42; /* ??/ \\\\ end:1\")" "$T_TMP/run.out"
  # Script text: a string literal with the same bytes, and a -D value.
  t "a script string with */, ??/ and backslash prints verbatim" 0 "$HOSTILE$NL" '' \
    -- "$UKSTAP" -e 'probe begin { println("*/ int injected = 42; /* ??/ \\ end"); exit() }'
fi
# DWARF type names never reach the C, yet the usual integer typedefs still read right: the
# parameters' values are the ones the program passes (its own printf says them).
cat > "$T_TMP/typedefs.c" <<'EOC'
#include <stdint.h>
#include <stdio.h>
__attribute__((noinline)) int f(uintptr_t a, int32_t b, intptr_t c) { return (int)(a + b + c); }
int main(void) { printf("%d %d %d\n", 7, -3, -9); return f(7, -3, -9) == -5 ? 0 : 1; }
EOC
if t_build "the typedef test program" gcc -O1 -g -o "$T_TMP/typedefs" "$T_TMP/typedefs.c"; then
  t "uintptr_t/int32_t/intptr_t parameters read as the program passes them" 0 $'7 -3 -9\n7 -3 -9\n' '' -- \
    "$UKSTAP" -e 'probe process("'"$T_TMP/typedefs"'").function("f") { printf("%d %d %d\n", $a, $b, $c) }' \
    -c "$T_TMP/typedefs"
fi
t_done
