//go:build !linux

package artifact

// openNonBlock is zero off Linux; files are checked to be regular before
// they are read.
const openNonBlock = 0

// swap puts tmp at dir by two renames where no exchange rename is used.
func swap(tmp, dir string) error {
	return swapAside(tmp, dir)
}
