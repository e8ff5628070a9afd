//go:build linux

package tools

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyTerminalIoctls installs, on every thread of this process (and so on everything it
// execs), a seccomp filter that makes ioctl(TIOCSTI) (push a byte into a terminal's input)
// and ioctl(TIOCLINUX) (the console's selection and paste) fail with EPERM, whatever the
// caller's privileges: the kernel lets root push input into any terminal it holds a
// descriptor of, and this is the one check that does not depend on how that descriptor was
// had. With noMPTCP it also refuses socket(…, IPPROTO_MPTCP): Landlock's TCP rules do not see
// Multipath TCP, so where they are the network confinement an MPTCP socket would pass them
// (programs fall back to plain TCP when MPTCP is refused).
//
// The filter is checked on the low 32 bits of the request only, as the kernel reads it
// (an unsigned int), so setting high bits cannot slip past it; on amd64 the i386 and x32
// entry points are covered too. On another architecture it returns an error (the caller
// decides; Landlock and the missing controlling terminal still stand).
func denyTerminalIoctls(noMPTCP bool) error {
	native, ok := seccompArch[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		retAllow = unix.SECCOMP_RET_ALLOW
		retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		offNr    = 0
		offArch  = 4
		offArg1  = 16 + 8*1 // low word, little endian (every architecture listed is)
		offArg2  = 16 + 8*2
	)
	var p bpfProg
	p.ld(offArch)
	p.jeq(native.arch, "native", "compat")
	p.label("native")
	p.ld(offNr)
	p.jeq(native.ioctl, "ioctl", "")
	if native.x32ioctl != 0 {
		p.jeq(native.x32ioctl, "ioctl", "")
	}
	if noMPTCP {
		p.jeq(native.socket, "socket", "")
	}
	p.ret(retAllow)
	p.label("compat")
	if native.compatArch != 0 {
		p.jeq(native.compatArch, "", "allow")
		p.ld(offNr)
		p.jeq(native.compatIoctl, "ioctl", "allow")
	}
	p.label("allow")
	p.ret(retAllow)
	p.label("ioctl")
	p.ld(offArg1)
	p.jeq(unix.TIOCSTI, "deny", "")
	p.jeq(unix.TIOCLINUX, "deny", "ok")
	p.label("socket")
	p.ld(offArg2)
	p.jeq(unix.IPPROTO_MPTCP, "deny", "ok")
	p.label("deny")
	p.ret(retEPERM)
	p.label("ok")
	p.ret(retAllow)
	filter, err := p.assemble()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// TSYNC: every thread of the Go runtime gets it, not just this one.
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// seccompArch are the numbers the filter needs, by GOARCH.
var seccompArch = map[string]struct {
	arch, ioctl, x32ioctl, socket uint32
	compatArch, compatIoctl       uint32
}{
	"amd64": {arch: unix.AUDIT_ARCH_X86_64, ioctl: 16, x32ioctl: 0x40000000 | 514, socket: 41,
		compatArch: unix.AUDIT_ARCH_I386, compatIoctl: 54},
	"arm64":   {arch: unix.AUDIT_ARCH_AARCH64, ioctl: 29, socket: 198},
	"riscv64": {arch: unix.AUDIT_ARCH_RISCV64, ioctl: 29, socket: 198},
}

// bpfProg is a classic BPF program written with labels, resolved by assemble: a jump names
// the label it goes to on true and on false ("" is the next instruction). Jumps go forward
// only, as BPF requires.
type bpfProg struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (p *bpfProg) ld(off uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (p *bpfProg) ret(v uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v})
}

func (p *bpfProg) jeq(v uint32, t, f string) {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.ins)] = [2]string{t, f}
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: v})
}

func (p *bpfProg) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

func (p *bpfProg) assemble() ([]unix.SockFilter, error) {
	for i, j := range p.jumps {
		for k, name := range j {
			if name == "" {
				continue
			}
			at, ok := p.labels[name]
			if !ok || at <= i || at-i-1 > 255 {
				return nil, fmt.Errorf("bpf: bad jump to %q at %d", name, i)
			}
			if k == 0 {
				p.ins[i].Jt = uint8(at - i - 1)
			} else {
				p.ins[i].Jf = uint8(at - i - 1)
			}
		}
	}
	return p.ins, nil
}
