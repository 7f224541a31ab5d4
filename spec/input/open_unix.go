//go:build unix

package input

import "syscall"

// openNonBlock keeps opening a FIFO from waiting for a writer.
const openNonBlock = syscall.O_NONBLOCK
