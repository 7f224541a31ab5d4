package artifact

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// swap puts tmp at dir. Where dir exists, the two are exchanged in one
// rename (RENAME_EXCHANGE), so dir is never missing; the old output, now at
// tmp, is then removed. File systems without the exchange fall back to two
// renames.
func swap(tmp, dir string) error {
	if _, err := os.Lstat(dir); err != nil {
		return swapAside(tmp, dir)
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return swapAside(tmp, dir)
	}
	if err != nil {
		return fmt.Errorf("swap new output into %s: %w", dir, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove old output: %w", err)
	}
	return nil
}
