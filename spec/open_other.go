//go:build !unix

package spec

// openNonBlock is zero where the OS has no non-blocking open; files are
// still checked to be regular before they are opened.
const openNonBlock = 0
