// gz-host-go: a Go program that drives Vulkan through cgo, as Go programs
// with a GPU renderer do. The Go runtime owns every signal's handler (with
// SA_ONSTACK, on its own signal stacks), and its exit does not run C's
// atexit.
//
//	gz-host-go loop       submits a labelled fill ("go frame") and then
//	                      works in Go code, again and again, until a signal
//	                      ends it (Go's default: death by that signal);
//	                      prints "ready" once it submits
//	gz-host-go frames N   N frames, then destroys the device and the
//	                      instance and returns from main (Go's exit)
package main

/*
#cgo CFLAGS: -I${SRCDIR}/..
#cgo LDFLAGS: -lvulkan
#include "host_vk.h"

static host_vk v;
static void go_open(void) { host_vk_instance(&v, VK_API_VERSION_1_3); host_vk_device(&v); }
static void go_frame(void) { host_vk_work_labelled(&v, "go frame"); }
static void go_close(void) { host_vk_close(&v); }
*/
import "C"

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"strconv"
)

// The main goroutine stays on the process's first thread, the one the
// kernel hands a signal sent to the process whenever it does not block it:
// the signal then comes while this goroutine runs, mostly in Go code.
func init() {
	runtime.LockOSThread()
}

// busy keeps the goroutine in Go code for a while: a signal then most
// likely arrives while Go, not C, runs.
func busy(seed byte) byte {
	buf := make([]byte, 1<<16)
	for i := range buf {
		buf[i] = seed + byte(i)
	}
	sum := sha256.Sum256(buf)
	for i := 0; i < 20; i++ {
		sum = sha256.Sum256(append(buf, sum[:]...))
	}
	return sum[0]
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gz-host-go loop | frames N")
		os.Exit(64)
	}
	C.go_open()
	switch os.Args[1] {
	case "loop":
		var seed byte
		for i := 0; ; i++ {
			C.go_frame()
			seed = busy(seed)
			if i == 0 {
				fmt.Println("ready")
			}
		}
	case "frames":
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			os.Exit(64)
		}
		var seed byte
		for i := 0; i < n; i++ {
			C.go_frame()
			seed = busy(seed)
		}
		C.go_close()
		fmt.Printf("go: %d frames\n", n)
	}
}
