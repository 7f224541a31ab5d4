//go:build !linux

package artifact

// swap puts tmp at dir by two renames where no exchange rename is used.
func swap(tmp, dir string) error {
	return swapAside(tmp, dir)
}
