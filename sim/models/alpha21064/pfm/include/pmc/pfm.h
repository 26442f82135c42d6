/* <pmc/pfm.h>: the OSF/1 pfm(7) performance-counter pseudo-device of the DEC Alpha 21064,
 * emulated by pmchal, with the vocabulary of DEC's <sys/pfcntr.h>. Code written for the OSF/1
 * device ports by replacing open/ioctl/read/close on /dev/pfcntr with pfm_open, pfm_ioctl,
 * pfm_read and pfm_close, and by running emulated activity (pfm_sim_run) where the real
 * machine would just run. C11 (or C++), LP64.
 *
 *   #include <pmc/pfm.h>
 *   int fd = pfm_open("/dev/pfcntr", O_RDONLY | PCNTOPENALL);
 *   struct iccsr mux = {0};
 *   mux.iccsr_mux0 = PF_CYCLES;  mux.iccsr_pc0 = PF_C0_INT_EVERY_4096;
 *   mux.iccsr_mux1 = PF_DCACHE;  mux.iccsr_pc1 = PF_C1_INT_EVERY_256;
 *   pfm_ioctl(fd, PCNTSETMUX, &mux);
 *   pfm_ioctl(fd, PCNTRENABLE);
 *   pfm_sim_run("alpha-counters.toml");          // the activity being measured
 *   struct pfcntrs cntrs[1], *p = cntrs;
 *   pfm_ioctl(fd, PCNTGETCNT, &p);               // interrupt counts, not events
 *   pfm_close(fd);
 *
 * Sources: docs/hardware/alpha21064.md (section 4b: numeric values, structures) and the
 * OSF/1 3.0 pfm(7) page (semantics, errors). Choices neither makes are marked [U]; the driver's
 * are listed in sim/models/alpha21064/pfm_driver.cpp ([U12]..[U16]; the chip's, [U1]..[U11], in
 * alpha21064_model.cpp beside it).
 *
 * Every function returns -1 and sets errno on failure, as the system calls do:
 *   EBUSY   open: the CPU (PCNTOPENONE) or one of the CPUs (EACH, ALL) is already open
 *   EINVAL  open: no open mode in the flags, or PCNTOPENONE by a process not bound to a CPU
 *           (pfm_sim_bind); ioctl: PCNTSETMUX with an undefined MUX0 or iccsr_disable = 3,
 *           PCNTSETITEMS of no (or an unknown) item, PCNTCLEARCNT with profiling only,
 *           PCNTGETCNT without PFM_COUNTERS, PCNTGETIPLHIS without PFM_IPL, PCNTSETUADDR /
 *           PCNTSETKADDR without PFM_PROFILING or with start >= end, an unknown request [U]
 *   EFAULT  ioctl/read: a NULL pointer where the request reads or writes memory, or a result
 *           array smaller than the data (PCNTOPENEACH: one element per CPU) when its extent is
 *           known through pfm_sim_map [U]
 *   ENODEV  open: a path other than /dev/pfcntr [U], or PCNTOPENONE bound to a CPU the emulated
 *           system does not have [U]
 *   ENOMEM  PCNTSETUADDR / PCNTSETKADDR: a range of 2^24 bytes (16 MiB) or more [U]
 *   EBADF   a descriptor pfm_open did not return, or one already closed
 */
#ifndef PMC_PFM_H
#define PMC_PFM_H

#include <stddef.h>

#if defined(__GNUC__)
#define PFM_API __attribute__((visibility("default")))
#else
#define PFM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the device -------------------------------------------------------------------------- */
#define PFM_DEVICE "/dev/pfcntr" /* character device 26/0 on OSF/1 (pfm(7) FILES) */

/* Open modes, OR-ed into the open flags (pfcntr.h 2001). */
#define PCNTOPENONE 0100000  /* this CPU only; the process must be bound to it */
#define PCNTOPENEACH 0200000 /* every CPU, data kept per CPU */
#define PCNTOPENALL 0300000  /* every CPU, data aggregated */
#define PCNTOPENMASK 0300000

/* ioctl requests: OSF/1 _IO/_IOR/_IOW('P', n, type), the values SPIN used (sheet 4b). */
#define PCNTRDISABLE 0x20005000UL  /* _IO('P',0) */
#define PCNTRENABLE 0x20005001UL   /* _IO('P',1) */
/* [U] pfm(7)'s text calls these two PCNTDISABLE and PCNTENABLE; both spellings work. */
#define PCNTDISABLE PCNTRDISABLE
#define PCNTENABLE PCNTRENABLE
#define PCNTSETMUX 0x80085002UL    /* _IOW('P',2,struct iccsr): arg is a struct iccsr * */
#define PCNTLOGALL 0x20005003UL    /* _IO('P',3) */
#define PCNTLOGSELECT 0x20005004UL /* _IO('P',4) */
#define PCNTCLEARCNT 0x20005005UL  /* _IO('P',5) */
/* _IOW('P',6,struct pfcntrs *) as in pfcntr.h 2001 and pfm(7)'s sample: arg is a struct
 * pfcntrs ** (the address of a pointer to the array). [S-conflict: 1993 had _IOR('P',6,struct
 * pfcntrs), SPIN 0x40085006; the pfm(7) usage decides.] */
#define PCNTGETCNT 0x80085006UL
#define PCNTGETRSIZE 0x4008500AUL  /* _IOR('P',10,long): arg is a long * */
/* _IOW('P',11,struct pfipls *) (pfcntr.h 2001, pfm(7) sample): arg is a struct pfipls ** */
#define PCNTGETIPLHIS 0x8008500BUL
#define PCNTSETITEMS 0x8008501FUL  /* _IOW('P',31,long): arg is a long * */
#define PCNTSETUADDR 0x80105020UL  /* _IOW('P',32,struct addr_range) */
#define PCNTSETKADDR 0x80105021UL  /* _IOW('P',33,struct addr_range) */

/* Items collected at each counter interrupt (PCNTSETITEMS). */
#define PFM_COUNTERS 1
#define PFM_IPL 2
#define PFM_PROFILING 4

/* EV4 multiplexor values (pfcntr.h "EV4 specific multiplexor definitions"). MUX0, counter 0: */
#define PF_ISSUES 0x0     /* total issues / 2 */
#define PF_PIPEDRY 0x2    /* pipeline dry */
#define PF_LOADI 0x4      /* load instructions */
#define PF_PIPEFROZEN 0x6 /* pipeline frozen */
#define PF_BRANCHI 0x8    /* branches and calls */
#define PF_CYCLES 0xa     /* cycles */
#define PF_PALMODE 0xb    /* cycles in PALcode */
#define PF_NONISSUES 0xc  /* total non-issues / 2 */
#define PF_EXTPIN0 0xe    /* external pin 0 */
/* MUX1, counter 1: */
#define PF_DCACHE 0x0     /* D-cache misses */
#define PF_ICACHE 0x1     /* I-cache misses */
#define PF_DUAL 0x2       /* dual-issue cycles */
#define PF_BRANCHMISS 0x3 /* mispredicted branches */
#define PF_FPINST 0x4     /* FP operate instructions */
#define PF_INTOPS 0x5     /* integer operates */
#define PF_STOREI 0x6     /* store instructions */
#define PF_EXTPIN1 0x7    /* external pin 1 */
/* Interrupt intervals (pfcntr.h 2001): the PC bits. */
#define PF_C0_INT_EVERY_65536 0
#define PF_C0_INT_EVERY_4096 1
#define PF_C1_INT_EVERY_4096 0
#define PF_C1_INT_EVERY_256 1

/* The ICCSR in write format: DEC's "ev4 iccsr register encoding", LSB first; only the fields
 * that can change are named, the rest are ignore fields (set them to 0; the chip ignores them).
 * Laid out in two 32-bit units so that it is plain C11: the same 8 bytes as DEC's struct on a
 * little-endian LP64 target (x86-64, Alpha). */
struct iccsr {
  unsigned int iccsr_pc1 : 1;      /* bit 0: counter-1 interval (PF_C1_INT_EVERY_*) */
  unsigned int iccsr_ign0 : 2;     /* bits 2:1 */
  unsigned int iccsr_pc0 : 1;      /* bit 3: counter-0 interval (PF_C0_INT_EVERY_*) */
  unsigned int iccsr_ign1 : 4;     /* bits 7:4 */
  unsigned int iccsr_mux0 : 4;     /* bits 11:8: counter-0 select */
  unsigned int iccsr_ign2 : 20;    /* bits 31:12 */
  unsigned int iccsr_mux1 : 3;     /* bits 34:32: counter-1 select */
  unsigned int iccsr_disable : 2;  /* bits 36:35: 1 disables counter 0, 2 counter 1; not 3 */
  unsigned int iccsr_ign3 : 27;    /* bits 63:37 */
};

/* PCNTGETCNT: the driver's counts of interrupts, not the chip's count of events (pfcntr.h);
 * an event count is about pf_cntrN times the interval. pr_cycle: cycles counted while
 * monitoring was enabled [U]. */
struct pfcntrs {
  long pf_cntr0;
  long pf_cntr1;
  long pr_cycle;
};

/* PCNTGETIPLHIS: ticks by IPL (pfm(7)): 0-5 IPL 0-5, 6 unused, 7 idle, 8 user mode.
 * [U] the field name; pfcntr.h 1993 used a plain ulong[9]. */
#define PFM_NIPL 9
struct pfipls {
  unsigned long pf_ipl[PFM_NIPL];
};

/* PCNTSETUADDR / PCNTSETKADDR: the PCs to profile, [start, end). [U] unsigned long fields. */
struct addr_range {
  unsigned long start;
  unsigned long end;
};

/* ---- the system calls -------------------------------------------------------------------- */
PFM_API int pfm_open(const char* path, int flags);
/* ioctl(2)'s shape: the third argument only for the requests that take one (the pointer the
 * comment at each request names; pass NULL, not a plain 0, for a null pointer), none for
 * PCNTRENABLE, PCNTRDISABLE, PCNTLOGALL, PCNTLOGSELECT and PCNTCLEARCNT (pfm(7): "no arguments";
 * a third one is accepted and ignored). The request is read as 32 bits, as the kernel's
 * `unsigned int cmd`: a request kept in an int and sign-extended still works. */
PFM_API int pfm_ioctl(int fd, unsigned long request, ...);
/* The PC profile: up to nbytes of PCNTGETRSIZE's bytes, one unsigned int (32-bit) sample count
 * per 16 bytes of text from the range's start (each CPU's in turn when opened EACH), from the
 * first bucket on every call [U]. Returns the bytes copied; 0 when profiling is off. */
PFM_API long pfm_read(int fd, void* buf, size_t nbytes);
PFM_API int pfm_close(int fd);

/* ---- the emulated machine ---------------------------------------------------------------- */
/* A fresh system of ncpus 21064s (1..64; 1 at start-up): every descriptor is closed, counts and
 * processes forgotten, the caller unbound with pid 1. */
PFM_API int pfm_sim_reset(unsigned ncpus);
/* Binds the calling process to a CPU (as bind_to_cpu(3) would), or unbinds it with -1. */
PFM_API int pfm_sim_bind(int cpu);
/* The calling process's id (PCNTLOGSELECT marks it); 1 at start-up; not 0. */
PFM_API int pfm_sim_set_pid(unsigned long pid);
/* Runs activity: a workload file or TOML text (docs/workload-format.md), each segment on the
 * CPU its `cpu` names. -1 with errno EINVAL (a bad workload, a CPU the system lacks) or ENOENT
 * (no such file); pfm_sim_error() says why. */
PFM_API int pfm_sim_run(const char* workload_toml_path);
PFM_API int pfm_sim_run_toml(const char* workload_toml_text);
/* Declares [base, base + bytes) writable user memory. Once any region is declared, a result an
 * ioctl or read copies out must lie inside one, or the call fails with EFAULT, as copyout(9)
 * does at an unmapped address; with none declared only NULL faults [U]. pfm_sim_unmap_all()
 * forgets them. */
PFM_API int pfm_sim_map(const void* base, size_t bytes);
PFM_API void pfm_sim_unmap_all(void);
/* The message of the last failure of this library's calls ("" when none). */
PFM_API const char* pfm_sim_error(void);

#ifdef __cplusplus
}
#endif

#endif /* PMC_PFM_H */
