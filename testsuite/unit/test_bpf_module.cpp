// loader/bpf_module: reading libbpf's messages of a failed load (parse_load_failure). Truth: two
// real logs of one script the verifier rejects, captured from ukstap 31147e9 on kernel 6.18 with
// libbpf 1.1.2 (the text ukstap prints after its "ukstap:" line under -v and -vvv: the messages
// of bpf_object__load). The script (guru mode):
//   function bad:long () %{ STAP_RETURN(*(volatile long *)8); %}
//   probe timer.profile { if (pid() == 1) println(pgrp()) }     <- stp_probe_0, loads fine
//   probe syscall.getpid { a = bad(); println(a) }             <- stp_probe_1, rejected
// pgrp() reads task_struct fields by CO-RE, so under -vvv libbpf names stp_probe_0 in its
// relocation lines before it names stp_probe_1 as failing: the line that names the failing
// program is "prog 'stp_probe_1': BPF program load failed" and the verifier's complaint is
// "R1 invalid mem access 'scalar'" (both read off the logs by eye).
#include <catch2/catch.hpp>
#include <string>

#include "loader/bpf_module.h"

using ukstap::loader::LoadFailure;
using ukstap::loader::parse_load_failure;

namespace {

// -v: only libbpf's warnings and errors.
const char* kLogV = R"LOG(
libbpf: prog 'stp_probe_1': BPF program load failed: Permission denied
libbpf: prog 'stp_probe_1': -- BEGIN PROG LOAD LOG --
arg#0 reference type('UNKNOWN ') size cannot be determined: -22
0: R1=ctx() R10=fp0
; STP_PROBE_TRACEPOINT(1, "syscalls", "sys_enter_getpid") @ stap_a9466387d2132e41dc96.c:148
0: (b4) w1 = 0                        ; R1=0
; uint32_t zero = 0; @ stp_bpf_base.h:151
1: (63) *(u32 *)(r10 -4) = r1         ; R1=0 R10=fp0 fp-8=0000????
2: (bf) r2 = r10                      ; R2=fp0 R10=fp0
;  @ stap_a9466387d2132e41dc96.c:0
3: (07) r2 += -4                      ; R2=fp-4
; return bpf_map_lookup_elem(&stp_session, &zero); @ stp_bpf_base.h:152
4: (18) r1 = 0xffffc900000c3ec8       ; R1=map_ptr(map=stp_session,ks=4,vs=224)
6: (85) call bpf_map_lookup_elem#1    ; R0=map_value(map=stp_session,ks=4,vs=224)
7: (bf) r7 = r0                       ; R0=map_value(map=stp_session,ks=4,vs=224) R7=map_value(map=stp_session,ks=4,vs=224)
; if (!s || s->state != STP_SESSION_RUNNING) @ stp_bpf_base.h:240
8: (15) if r7 == 0x0 goto pc+18       ; R7=map_value(map=stp_session,ks=4,vs=224)
9: (61) r1 = *(u32 *)(r7 +0)          ; R1=scalar(smin=0,smax=umax=0xffffffff,var_off=(0x0; 0xffffffff)) R7=map_value(map=stp_session,ks=4,vs=224)
10: (56) if w1 != 0x1 goto pc+16      ; R1=1
; key = bpf_get_smp_processor_id() * 2 + slot; @ stp_bpf_base.h:242
11: (85) call bpf_get_smp_processor_id#8      ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=1,var_off=(0x0; 0x1))
12: (64) w0 <<= 1                     ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=2,var_off=(0x0; 0x2))
13: (63) *(u32 *)(r10 -4) = r0        ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=2,var_off=(0x0; 0x2)) R10=fp0 fp-8=mmmm????
14: (bf) r2 = r10                     ; R2=fp0 R10=fp0
15: (07) r2 += -4                     ; R2=fp-4
; k = bpf_map_lookup_elem(ctxmap, &key); @ stp_bpf_base.h:243
16: (18) r1 = 0xffffc90009bb2000      ; R1=map_ptr(map=stp_ctx,ks=4,vs=11872)
18: (85) call bpf_map_lookup_elem#1   ; R0=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872)
19: (bf) r6 = r0                      ; R0=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872) R6=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872)
; if (!k || __sync_lock_test_and_set(&k->busy, 1)) { @ stp_bpf_base.h:244
20: (15) if r6 == 0x0 goto pc+4       ; R6=map_value(map=stp_ctx,ks=4,vs=11872)
21: (bf) r9 = r6                      ; R6=map_value(map=stp_ctx,ks=4,vs=11872) R9=map_value(map=stp_ctx,ks=4,vs=11872)
22: (b4) w1 = 1                       ; R1=1
23: (c3) r1 = atomic_xchg((u32 *)(r9 +0), r1)         ; R1=scalar(smin=0,smax=umax=0xffffffff,var_off=(0x0; 0xffffffff)) R9=map_value(map=stp_ctx,ks=4,vs=11872)
24: (16) if w1 == 0x0 goto pc+4 29: R0=map_value(map=stp_ctx,ks=4,vs=11872) R1=0 R6=map_value(map=stp_ctx,ks=4,vs=11872) R7=map_value(map=stp_session,ks=4,vs=224) R9=map_value(map=stp_ctx,ks=4,vs=11872) R10=fp0 fp-8=mmmm????
29: (b4) w7 = 0                       ; R7=0
; k->slot = (uint8_t)slot; @ stp_bpf_base.h:248
30: (73) *(u8 *)(r9 +47) = r7         ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; STP_PROBE_ENTER(1); @ stap_a9466387d2132e41dc96.c:150
31: (63) *(u32 *)(r10 -4) = r7        ; R7=0 R10=fp0 fp-8=0000????
32: (bf) r2 = r10                     ; R2=fp0 R10=fp0
; k->slot = (uint8_t)slot; @ stp_bpf_base.h:248
33: (07) r2 += -4                     ; R2=fp-4
; STP_PROBE_ENTER(1); @ stap_a9466387d2132e41dc96.c:150
34: (18) r1 = 0xffffc90000d51ec8      ; R1=map_ptr(map=stp_globals,ks=4,vs=8)
36: (85) call bpf_map_lookup_elem#1   ; R0=map_value(map=stp_globals,ks=4,vs=8)
37: (55) if r0 != 0x0 goto pc+2       ; R0=map_value(map=stp_globals,ks=4,vs=8)
40: (b7) r1 = -1                      ; R1=-1
; k->loc = -1; @ stp_bpf_base.h:257
41: (7b) *(u64 *)(r9 +16) = r1        ; R1=-1 R9=map_value(map=stp_ctx,ks=4,vs=11872)
42: (b7) r1 = 0                       ; R1=0
; c->l.p1.l_a = 0; @ stap_a9466387d2132e41dc96.c:151
43: (7b) *(u64 *)(r9 +11816) = r1     ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->tok.pos = 0; @ stp_bpf_base.h:267
44: (7b) *(u64 *)(r9 +304) = r1       ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->tok.buf[0] = '\0'; @ stp_bpf_base.h:266
45: (73) *(u8 *)(r9 +176) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->error = 0; @ stp_bpf_base.h:255
46: (7b) *(u64 *)(r9 +8) = r1         ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
47: (b4) w2 = 1                       ; R2=1
; k->probe_id = id; @ stp_bpf_base.h:254
48: (63) *(u32 *)(r9 +4) = r2         ; R2=1 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->user_mode = umode; @ stp_bpf_base.h:264
49: (7b) *(u64 *)(r9 +32) = r1        ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
50: (63) *(u32 *)(r9 +40) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
51: (6b) *(u16 *)(r9 +44) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
52: (73) *(u8 *)(r9 +46) = r7         ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
53: (b7) r1 = 8                       ; R1=8
; STAP_RETURN(*(volatile long *)8);  @ stap_a9466387d2132e41dc96.c:68
54: (79) r1 = *(u64 *)(r1 +0)
R1 invalid mem access 'scalar'
processed 50 insns (limit 1000000) max_states_per_insn 0 total_states 4 peak_states 4 mark_read 0
-- END PROG LOAD LOG --
libbpf: prog 'stp_probe_1': failed to load: -13
libbpf: failed to load object '/proc/self/fd/5'
)LOG";

// -vvv: libbpf's debug messages too (the relocations of stp_probe_0 come first).
const char* kLogVVV = R"LOG(
libbpf: loading kernel BTF '/sys/kernel/btf/vmlinux': 0
libbpf: map 'stp_vmas': created successfully, fd=7
libbpf: map 'stp_ctx': created successfully, fd=8
libbpf: map 'stp_globals': created successfully, fd=9
libbpf: map 'stp_session': created successfully, fd=11
libbpf: map 'stp_events': created successfully, fd=12
libbpf: map 'stp_cfi_rows': created successfully, fd=13
libbpf: map 'stp_cfi_files': created successfully, fd=14
libbpf: map 'stp_cfi_pages': created successfully, fd=15
libbpf: map 'stp_cfi_inodes': created successfully, fd=16
libbpf: map 'stp_rowcache': created successfully, fd=17
libbpf: map 'stp_kvma_cache': created successfully, fd=18
libbpf: map 'stp_wake_asked': created successfully, fd=19
libbpf: map 'stp_ustacks': created successfully, fd=20
libbpf: map 'stp_kstacks': created successfully, fd=21
libbpf: map 'ukstap.rodata': created successfully, fd=22
libbpf: map '.rodata.str1.1': created successfully, fd=23
libbpf: sec '.text': found 13 CO-RE relocations
libbpf: CO-RE relocating [160] struct task_struct: found target candidate [114] struct task_struct in [vmlinux]
libbpf: prog 'stp_uwalk_frame': relo #0: <byte_off> [160] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp_uwalk_frame': relo #0: matching candidate #0 <byte_off> [114] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp_uwalk_frame': relo #0: patched insn #158 (ALU/ALU64) imm 1136 -> 1136
libbpf: prog 'stp_uwalk_frame': relo #1: <byte_off> [160] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp_uwalk_frame': relo #1: matching candidate #0 <byte_off> [114] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp_uwalk_frame': relo #1: patched insn #296 (ALU/ALU64) imm 1136 -> 1136
libbpf: CO-RE relocating [560] struct vm_area_struct: found target candidate [284] struct vm_area_struct in [vmlinux]
libbpf: prog 'stp__kvma_cb': relo #2: <byte_off> [560] struct vm_area_struct.vm_file (0:9 @ offset 88)
libbpf: prog 'stp__kvma_cb': relo #2: matching candidate #0 <byte_off> [284] struct vm_area_struct.vm_file (0:9 @ offset 88)
libbpf: prog 'stp__kvma_cb': relo #2: patched insn #3 (ALU/ALU64) imm 88 -> 88
libbpf: prog 'stp__kvma_cb': relo #3: <byte_off> [560] struct vm_area_struct.vm_start (0:0:0:0 @ offset 0)
libbpf: prog 'stp__kvma_cb': relo #3: matching candidate #0 <byte_off> [284] struct vm_area_struct.vm_start (0:0:0:0 @ offset 0)
libbpf: prog 'stp__kvma_cb': relo #3: patched insn #10 (ALU/ALU64) imm 0 -> 0
libbpf: prog 'stp__kvma_cb': relo #4: <byte_off> [560] struct vm_area_struct.vm_end (0:0:0:1 @ offset 8)
libbpf: prog 'stp__kvma_cb': relo #4: matching candidate #0 <byte_off> [284] struct vm_area_struct.vm_end (0:0:0:1 @ offset 8)
libbpf: prog 'stp__kvma_cb': relo #4: patched insn #20 (ALU/ALU64) imm 8 -> 8
libbpf: prog 'stp__kvma_cb': relo #5: <byte_off> [560] struct vm_area_struct.vm_pgoff (0:8 @ offset 80)
libbpf: prog 'stp__kvma_cb': relo #5: matching candidate #0 <byte_off> [284] struct vm_area_struct.vm_pgoff (0:8 @ offset 80)
libbpf: prog 'stp__kvma_cb': relo #5: patched insn #29 (ALU/ALU64) imm 80 -> 80
libbpf: prog 'stp__kvma_cb': relo #6: <byte_off> [560] struct vm_area_struct.vm_flags (0:3:0 @ offset 32)
libbpf: prog 'stp__kvma_cb': relo #6: matching candidate #0 <byte_off> [284] struct vm_area_struct.vm_flags (0:3:0 @ offset 32)
libbpf: prog 'stp__kvma_cb': relo #6: patched insn #38 (ALU/ALU64) imm 32 -> 32
libbpf: CO-RE relocating [580] struct file: found target candidate [718] struct file in [vmlinux]
libbpf: prog 'stp__kvma_cb': relo #7: <byte_off> [580] struct file.f_inode (0:5 @ offset 32)
libbpf: prog 'stp__kvma_cb': relo #7: matching candidate #0 <byte_off> [718] struct file.f_inode (0:5 @ offset 32)
libbpf: prog 'stp__kvma_cb': relo #7: patched insn #50 (ALU/ALU64) imm 32 -> 32
libbpf: CO-RE relocating [599] struct inode: found target candidate [895] struct inode in [vmlinux]
libbpf: prog 'stp__kvma_cb': relo #8: <byte_off> [599] struct inode.i_ino (0:11 @ offset 64)
libbpf: prog 'stp__kvma_cb': relo #8: matching candidate #0 <byte_off> [895] struct inode.i_ino (0:11 @ offset 64)
libbpf: prog 'stp__kvma_cb': relo #8: patched insn #57 (ALU/ALU64) imm 64 -> 64
libbpf: prog 'stp__kvma_cb': relo #9: <byte_off> [599] struct inode.i_sb (0:8 @ offset 40)
libbpf: prog 'stp__kvma_cb': relo #9: matching candidate #0 <byte_off> [895] struct inode.i_sb (0:8 @ offset 40)
libbpf: prog 'stp__kvma_cb': relo #9: patched insn #72 (ALU/ALU64) imm 40 -> 40
libbpf: CO-RE relocating [632] struct super_block: found target candidate [900] struct super_block in [vmlinux]
libbpf: prog 'stp__kvma_cb': relo #10: <byte_off> [632] struct super_block.s_dev (0:1 @ offset 16)
libbpf: prog 'stp__kvma_cb': relo #10: matching candidate #0 <byte_off> [900] struct super_block.s_dev (0:1 @ offset 16)
libbpf: prog 'stp__kvma_cb': relo #10: patched insn #78 (ALU/ALU64) imm 16 -> 16
libbpf: prog 'stp__kvma_cb': relo #11: <byte_off> [160] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp__kvma_cb': relo #11: matching candidate #0 <byte_off> [114] struct task_struct.mm (0:61 @ offset 1136)
libbpf: prog 'stp__kvma_cb': relo #11: patched insn #88 (ALU/ALU64) imm 1136 -> 1136
libbpf: CO-RE relocating [451] struct mm_struct: found target candidate [264] struct mm_struct in [vmlinux]
libbpf: prog 'stp__kvma_cb': relo #12: <byte_off> [451] struct mm_struct.context.vdso (0:0:54:7 @ offset 1240)
libbpf: prog 'stp__kvma_cb': relo #12: matching candidate #0 <byte_off> [264] struct mm_struct.context.vdso (0:0:54:7 @ offset 1240)
libbpf: prog 'stp__kvma_cb': relo #12: patched insn #95 (ALU/ALU64) imm 1240 -> 1240
libbpf: sec 'raw_tp/sched_process_exec': found 5 CO-RE relocations
libbpf: sec 'perf_event': found 3 CO-RE relocations
libbpf: prog 'stp_probe_0': relo #0: <byte_off> [160] struct task_struct.signal (0:135 @ offset 1848)
libbpf: prog 'stp_probe_0': relo #0: matching candidate #0 <byte_off> [114] struct task_struct.signal (0:135 @ offset 1848)
libbpf: prog 'stp_probe_0': relo #0: patched insn #102 (ALU/ALU64) imm 1848 -> 1848
libbpf: CO-RE relocating [510] struct signal_struct: found target candidate [541] struct signal_struct in [vmlinux]
libbpf: prog 'stp_probe_0': relo #1: <byte_off> [510] struct signal_struct.pids[2] (0:26:2 @ offset 376)
libbpf: prog 'stp_probe_0': relo #1: matching candidate #0 <byte_off> [541] struct signal_struct.pids[2] (0:26:2 @ offset 376)
libbpf: prog 'stp_probe_0': relo #1: patched insn #109 (ALU/ALU64) imm 376 -> 376
libbpf: CO-RE relocating [526] struct pid: found target candidate [524] struct pid in [vmlinux]
libbpf: prog 'stp_probe_0': relo #2: <byte_off> [526] struct pid.numbers[0].nr (0:8:0:0 @ offset 144)
libbpf: prog 'stp_probe_0': relo #2: matching candidate #0 <byte_off> [524] struct pid.numbers[0].nr (0:8:0:0 @ offset 144)
libbpf: prog 'stp_probe_0': relo #2: patched insn #118 (ALU/ALU64) imm 144 -> 144
libbpf: prog 'stp_rt_exec_seed': skipped loading
libbpf: prog 'stp_probe_1': BPF program load failed: Permission denied
libbpf: prog 'stp_probe_1': -- BEGIN PROG LOAD LOG --
arg#0 reference type('UNKNOWN ') size cannot be determined: -22
0: R1=ctx() R10=fp0
; STP_PROBE_TRACEPOINT(1, "syscalls", "sys_enter_getpid") @ stap_a9466387d2132e41dc96.c:148
0: (b4) w1 = 0                        ; R1=0
; uint32_t zero = 0; @ stp_bpf_base.h:151
1: (63) *(u32 *)(r10 -4) = r1         ; R1=0 R10=fp0 fp-8=0000????
2: (bf) r2 = r10                      ; R2=fp0 R10=fp0
;  @ stap_a9466387d2132e41dc96.c:0
3: (07) r2 += -4                      ; R2=fp-4
; return bpf_map_lookup_elem(&stp_session, &zero); @ stp_bpf_base.h:152
4: (18) r1 = 0xffffc9000013dec8       ; R1=map_ptr(map=stp_session,ks=4,vs=224)
6: (85) call bpf_map_lookup_elem#1    ; R0=map_value(map=stp_session,ks=4,vs=224)
7: (bf) r7 = r0                       ; R0=map_value(map=stp_session,ks=4,vs=224) R7=map_value(map=stp_session,ks=4,vs=224)
; if (!s || s->state != STP_SESSION_RUNNING) @ stp_bpf_base.h:240
8: (15) if r7 == 0x0 goto pc+18       ; R7=map_value(map=stp_session,ks=4,vs=224)
9: (61) r1 = *(u32 *)(r7 +0)          ; R1=scalar(smin=0,smax=umax=0xffffffff,var_off=(0x0; 0xffffffff)) R7=map_value(map=stp_session,ks=4,vs=224)
10: (56) if w1 != 0x1 goto pc+16      ; R1=1
; key = bpf_get_smp_processor_id() * 2 + slot; @ stp_bpf_base.h:242
11: (85) call bpf_get_smp_processor_id#8      ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=1,var_off=(0x0; 0x1))
12: (64) w0 <<= 1                     ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=2,var_off=(0x0; 0x2))
13: (63) *(u32 *)(r10 -4) = r0        ; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=2,var_off=(0x0; 0x2)) R10=fp0 fp-8=mmmm????
14: (bf) r2 = r10                     ; R2=fp0 R10=fp0
15: (07) r2 += -4                     ; R2=fp-4
; k = bpf_map_lookup_elem(ctxmap, &key); @ stp_bpf_base.h:243
16: (18) r1 = 0xffffc90009239000      ; R1=map_ptr(map=stp_ctx,ks=4,vs=11872)
18: (85) call bpf_map_lookup_elem#1   ; R0=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872)
19: (bf) r6 = r0                      ; R0=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872) R6=map_value_or_null(id=1,map=stp_ctx,ks=4,vs=11872)
; if (!k || __sync_lock_test_and_set(&k->busy, 1)) { @ stp_bpf_base.h:244
20: (15) if r6 == 0x0 goto pc+4       ; R6=map_value(map=stp_ctx,ks=4,vs=11872)
21: (bf) r9 = r6                      ; R6=map_value(map=stp_ctx,ks=4,vs=11872) R9=map_value(map=stp_ctx,ks=4,vs=11872)
22: (b4) w1 = 1                       ; R1=1
23: (c3) r1 = atomic_xchg((u32 *)(r9 +0), r1)         ; R1=scalar(smin=0,smax=umax=0xffffffff,var_off=(0x0; 0xffffffff)) R9=map_value(map=stp_ctx,ks=4,vs=11872)
24: (16) if w1 == 0x0 goto pc+4 29: R0=map_value(map=stp_ctx,ks=4,vs=11872) R1=0 R6=map_value(map=stp_ctx,ks=4,vs=11872) R7=map_value(map=stp_session,ks=4,vs=224) R9=map_value(map=stp_ctx,ks=4,vs=11872) R10=fp0 fp-8=mmmm????
29: (b4) w7 = 0                       ; R7=0
; k->slot = (uint8_t)slot; @ stp_bpf_base.h:248
30: (73) *(u8 *)(r9 +47) = r7         ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; STP_PROBE_ENTER(1); @ stap_a9466387d2132e41dc96.c:150
31: (63) *(u32 *)(r10 -4) = r7        ; R7=0 R10=fp0 fp-8=0000????
32: (bf) r2 = r10                     ; R2=fp0 R10=fp0
; k->slot = (uint8_t)slot; @ stp_bpf_base.h:248
33: (07) r2 += -4                     ; R2=fp-4
; STP_PROBE_ENTER(1); @ stap_a9466387d2132e41dc96.c:150
34: (18) r1 = 0xffffc90000d60ec8      ; R1=map_ptr(map=stp_globals,ks=4,vs=8)
36: (85) call bpf_map_lookup_elem#1   ; R0=map_value(map=stp_globals,ks=4,vs=8)
37: (55) if r0 != 0x0 goto pc+2       ; R0=map_value(map=stp_globals,ks=4,vs=8)
40: (b7) r1 = -1                      ; R1=-1
; k->loc = -1; @ stp_bpf_base.h:257
41: (7b) *(u64 *)(r9 +16) = r1        ; R1=-1 R9=map_value(map=stp_ctx,ks=4,vs=11872)
42: (b7) r1 = 0                       ; R1=0
; c->l.p1.l_a = 0; @ stap_a9466387d2132e41dc96.c:151
43: (7b) *(u64 *)(r9 +11816) = r1     ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->tok.pos = 0; @ stp_bpf_base.h:267
44: (7b) *(u64 *)(r9 +304) = r1       ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->tok.buf[0] = '\0'; @ stp_bpf_base.h:266
45: (73) *(u8 *)(r9 +176) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->error = 0; @ stp_bpf_base.h:255
46: (7b) *(u64 *)(r9 +8) = r1         ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
47: (b4) w2 = 1                       ; R2=1
; k->probe_id = id; @ stp_bpf_base.h:254
48: (63) *(u32 *)(r9 +4) = r2         ; R2=1 R9=map_value(map=stp_ctx,ks=4,vs=11872)
; k->user_mode = umode; @ stp_bpf_base.h:264
49: (7b) *(u64 *)(r9 +32) = r1        ; R1=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
50: (63) *(u32 *)(r9 +40) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
51: (6b) *(u16 *)(r9 +44) = r7        ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
52: (73) *(u8 *)(r9 +46) = r7         ; R7=0 R9=map_value(map=stp_ctx,ks=4,vs=11872)
53: (b7) r1 = 8                       ; R1=8
; STAP_RETURN(*(volatile long *)8);  @ stap_a9466387d2132e41dc96.c:68
54: (79) r1 = *(u64 *)(r1 +0)
R1 invalid mem access 'scalar'
processed 50 insns (limit 1000000) max_states_per_insn 0 total_states 4 peak_states 4 mark_read 0
-- END PROG LOAD LOG --
libbpf: prog 'stp_probe_1': failed to load: -13
libbpf: failed to load object '/proc/self/fd/5'
)LOG";

}  // namespace

TEST_CASE("load failure: the program libbpf says failed, under -v", "[bpf_module]") {
  LoadFailure f = parse_load_failure(kLogV);
  CHECK(f.program == "stp_probe_1");
  CHECK(f.reason == "R1 invalid mem access 'scalar'");
}

TEST_CASE("load failure: other programs named first (-vvv) are not blamed", "[bpf_module]") {
  // The bug this guards against: any "prog 'NAME'" line counted (a `|| true` in the condition),
  // so -vvv blamed stp_probe_0, whose CO-RE relocations libbpf reports before the failure.
  std::string log = kLogVVV;
  REQUIRE(log.find("prog 'stp_probe_0'") < log.find("prog 'stp_probe_1'"));
  LoadFailure f = parse_load_failure(log);
  CHECK(f.program == "stp_probe_1");
  CHECK(f.reason == "R1 invalid mem access 'scalar'");
}

TEST_CASE("load failure: \"failed to load\" alone names the program", "[bpf_module]") {
  LoadFailure f = parse_load_failure(
      "libbpf: prog 'stp_probe_0': relo #0: patched insn #1\n"
      "libbpf: prog 'stp_probe_7': failed to load: -7\n"
      "libbpf: failed to load object 'ukstap'\n");
  CHECK(f.program == "stp_probe_7");
  CHECK(f.reason.empty());  // no verifier log
}

TEST_CASE("load failure: no program named, no log", "[bpf_module]") {
  CHECK(parse_load_failure("").program.empty());
  LoadFailure f = parse_load_failure(
      "libbpf: map 'stp_events': failed to create: Operation not permitted(-1)\n"
      "libbpf: prog 'stp_probe_0': relo #0: patched insn #1\n"
      "libbpf: failed to load object 'ukstap'\n");
  CHECK(f.program.empty());
  CHECK(f.reason.empty());
}

TEST_CASE("load failure: the verifier's summary lines are not the reason", "[bpf_module]") {
  LoadFailure f = parse_load_failure(
      "libbpf: prog 'stp_probe_2': BPF program load failed: Argument list too long\n"
      "libbpf: prog 'stp_probe_2': -- BEGIN PROG LOAD LOG --\n"
      "0: (b7) r0 = 0\n"
      "BPF program is too large. Processed 1000001 insn\n"
      "processed 1000001 insns (limit 1000000) max_states_per_insn 4 total_states 1 peak_states 1 mark_read 1\n"
      "verification time 1 usec\n"
      "stack depth 8\n"
      "\n"
      "-- END PROG LOAD LOG --\n"
      "libbpf: prog 'stp_probe_2': failed to load: -7\n");
  CHECK(f.program == "stp_probe_2");
  CHECK(f.reason == "BPF program is too large. Processed 1000001 insn");
}
