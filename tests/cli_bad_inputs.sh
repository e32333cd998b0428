#!/usr/bin/env bash
# tests/cli_bad_inputs.sh TOOL: cufuse-dump-kernels on inputs a new user or a fuzzer would
# try (issue 38). Each must end with the exit status it names and a message saying what was
# wrong, within a time limit: never a signal (crash, abort), a hang, or an uncaught exception
# ("terminate called"). Prints one line per case and the counts; exits 1 if any case failed.
set -u
TOOL=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
export CUFUSE_CACHE=0

rep() { local s=$1 n=$2 out=""; out=$(printf "%${n}s" "" | sed "s/ /$(printf '%s' "$s" | sed 's/[\/&]/\\&/g')/g"); printf '%s' "$out"; }

# check NAME WANT_RC WANT_TEXT PROGRAM_FILE [tool args...] (env in CASE_ENV)
check() {
  local name=$1 want_rc=$2 want=$3 prog=$4
  shift 4
  local rc
  env ${CASE_ENV:-} timeout 60 "$TOOL" --no-compile --no-source --arg "x=f32[4]" --arg "y=f32[4]" "$@" - <"$prog" \
    >"$WORK/out" 2>"$WORK/err"
  rc=$?
  if [ $rc -ne "$want_rc" ] || ! grep -a -q -F -- "$want" "$WORK/out" "$WORK/err" || grep -q "terminate called" "$WORK/err"; then
    echo "FAIL $name: exit $rc (want $want_rc), want '$want'; stderr: $(head -c 400 "$WORK/err")"
    fail=$((fail + 1))
  else
    echo "ok   $name: exit $rc, $(grep -h -m1 -- "$want" "$WORK/err" "$WORK/out" | head -c 150)"
    pass=$((pass + 1))
  fi
}
prog() { printf '%s\n' "$1" >"$WORK/p"; echo "$WORK/p"; }

check parens_6000 2 "too deeply nested" "$(prog "$(rep '(' 6000)x$(rep ')' 6000)")"
check unary_12000 2 "too deeply nested" "$(prog "$(rep '-' 12000)x")"
check sin_25000 2 "too deeply nested" "$(prog "$(rep 'sin(' 25000)x$(rep ')' 25000)")"
check lists_5000 2 "too deeply nested" "$(prog "$(rep '[' 5000)1$(rep ']' 5000)")"
check sum_100000 2 "expression too deep" "$(prog "x$(rep '+x' 100000)")"
check attr_50000 2 "expression too deep" "$(prog "x$(rep '.T' 50000)")"
check sum_900 0 "results:" "$(prog "x$(rep '+x' 900)")"
check statements_3000 0 "results:" "$(prog "t = x$(for i in $(seq 3000); do printf '\nt = t + y'; done)")"
check repeat_int64max 2 "MemoryError" "$(prog '(x, y) * 0x7fffffffffffffff')"
check repeat_1e8 2 "MemoryError" "$(prog '(1,)*100000000')"
check repeat_concat 2 "MemoryError" "$(prog "$(printf 't = (1,)*1048576\nt + t')")"
check shift_700 2 "OverflowError" "$(prog 'x * (1 << 700)')"
check zero_shift_700 0 "results:" "$(prog 'x * (0 << 700)')"
check huge_literal 2 "error" "$(prog "x * $(rep 9 400)")"
check huge_float 0 "results:" "$(prog "x * 1e99999")"
check empty_program 2 "empty" "$(prog '')"
check only_open 2 "never closed" "$(prog 'sin(')"
check nul_byte 2 "error" "$(printf 'x\0+1\n' >"$WORK/p0"; echo "$WORK/p0")"
check bad_utf8 2 "error" "$(printf 'x + \xff\xfe\n' >"$WORK/p1"; echo "$WORK/p1")"
check zeros_huge 2 "too big" "$(prog 'zeros((1<<62, 1<<62))')"
check reshape_huge 2 "Error" "$(prog 'x.reshape((1<<40, 1<<40))')"
check arange_huge 2 "Error" "$(prog 'arange(0.0, 1e300, 1.0)')"
check diagonal_write 2 "a read-only view of shape () (diagonal()" "$(prog "$(printf 'd = diagonal(x.reshape((2, 2)))\nd[0] = 1.0\nd')")"
check broadcast_write 2 "a broadcast view of shape (3, 4)" "$(prog "$(printf 'b = broadcast_to(x, (3, 4))\nb += 1\nb')")"
check broadcast_row_write 2 "a read-only view of shape (4,)" "$(prog "$(printf 'b = broadcast_to(x, (3, 4))\nb[1] = 0\nb')")"
CASE_ENV="CUFUSE_ARCH=abc" check arch_abc 0 "CUFUSE_ARCH=abc is not accepted" "$(prog 'x + 1')"
CASE_ENV="CUFUSE_LOG=bogus" check log_bogus 0 "CUFUSE_LOG=bogus is not accepted" "$(prog 'x + 1')"
CASE_ENV="CUFUSE_EW_UNROLL=99" check unroll_99 0 "CUFUSE_EW_UNROLL=99 is not accepted" "$(prog 'x + 1')"
check arch_flag_bad 2 "--arch" "$(prog 'x + 1')" --arch abc
check dot_dev_full 2 "cannot write" "$(prog 'x + 1')" --dot /dev/full
check dot_no_dir 2 "cannot write" "$(prog 'x + 1')" --dot /nonexistent-dir/plan.dot
# The report itself to a full device: an error, not a silent success.
if [ -w /dev/full ]; then
  timeout 60 "$TOOL" --no-compile --arg "x=f32[4]" "x + 1" >/dev/full 2>"$WORK/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q "cannot write" "$WORK/err"; then echo "ok   stdout_dev_full: exit 2"; pass=$((pass + 1))
  else echo "FAIL stdout_dev_full: exit $rc: $(head -c 300 "$WORK/err")"; fail=$((fail + 1)); fi
fi
echo "cli bad inputs: $pass ended as expected, $fail did not"
[ $fail -eq 0 ]
