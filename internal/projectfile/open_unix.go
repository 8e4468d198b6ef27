//go:build unix

package projectfile

import "syscall"

// oNonblock makes an open of a named pipe return at once rather than wait
// for a writer; on a regular file it changes nothing.
const oNonblock = syscall.O_NONBLOCK
