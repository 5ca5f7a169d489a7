//go:build !unix

package record

import (
	"errors"
	"os"
)

// mapFile is not available here: ReadWhole reads the file instead.
func mapFile(*os.File, int64) ([]byte, func(), error) {
	return nil, nil, errors.New("no memory mapping on this system")
}
