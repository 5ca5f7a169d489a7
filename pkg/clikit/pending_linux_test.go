package clikit

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A SIGINT pending for the calling thread (blocked there, sent to it) is
// in the system call's set, and found by both looks; once delivered it is
// pending no more.
func TestPendingSignal(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT)
	defer signal.Stop(ch)
	var block, old unix.Sigset_t
	block.Val[0] = 1 << (syscall.SIGINT - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, &old); err != nil {
		t.Fatal(err)
	}
	if got := pendingSignal(true); got != 0 {
		t.Fatalf("before the signal: %v pending", got)
	}
	if err := unix.Tgkill(os.Getpid(), unix.Gettid(), unix.SIGINT); err != nil {
		t.Fatal(err)
	}
	set, ok := pendingHere()
	thread, all := pendingSignal(false), pendingSignal(true)
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGINT not delivered once unblocked")
	}
	if !ok || set&(1<<(syscall.SIGINT-1)) == 0 {
		t.Errorf("rt_sigpending: set %#x, ok %v; want SIGINT's bit", set, ok)
	}
	if thread != syscall.SIGINT || all != syscall.SIGINT {
		t.Errorf("pending SIGINT: this thread's %v, every thread's %v", thread, all)
	}
	if got := pendingSignal(true); got != 0 {
		t.Errorf("after delivery: %v pending", got)
	}
}
