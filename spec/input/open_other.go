//go:build !unix

package input

// openNonBlock is zero where the OS has no non-blocking open; files are
// checked to be regular before they are opened.
const openNonBlock = 0
