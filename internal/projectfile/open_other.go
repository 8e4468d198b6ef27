//go:build !unix

package projectfile

// oNonblock: without O_NONBLOCK, the stat before the open is what keeps
// named pipes out.
const oNonblock = 0
