package sandbox

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// CompanionName is the small launcher built beside otter (cmd/otter-sandbox):
// the same Main as otter's own launcher mode, in a binary of 4 MB whose
// start costs 3 ms of package initialisation where otter's 80 MB cost
// 25–35 ms — paid by every stdio server otter starts, before the server's
// own start.
const CompanionName = "otter-sandbox"

// companionBuildID is the Go build ID of the otter-sandbox built with this
// otter, set by the build (scripts/build.sh: -ldflags -X). Empty, as in a
// plain `go build` or `go install` of otter, otter is its own launcher.
var companionBuildID string

var launchers sync.Map // self → the launcher to run for it

// Launcher is the program to start as the launcher for self (otter's own
// executable): the otter-sandbox beside self when it is the very build
// made with this otter (its Go build ID, a hash of its content, is the one
// recorded in otter), else self. Any other file of that name — left from
// an older otter, copied by hand, rebuilt alone — is not run: it might
// read a policy otherwise (a field it does not know is ignored by
// encoding/json), and whoever can write beside otter could as well
// replace otter, so the check guards against skew, not against them.
// The answer is kept per self: reading the build ID once costs a fraction
// of a millisecond.
func Launcher(self string) string {
	if companionBuildID == "" || self == "" {
		return self
	}
	if l, ok := launchers.Load(self); ok {
		return l.(string)
	}
	l, companion := self, filepath.Join(filepath.Dir(self), CompanionName)
	if id, err := buildID(companion); err == nil && id == companionBuildID {
		l = companion
	}
	launchers.Store(self, l)
	return l
}

// maxBuildIDNote bounds the note read: a Go build ID is under 100 bytes.
const maxBuildIDNote = 4 << 10

// buildID reads the Go build ID of an ELF executable: the note the Go
// linker writes (name "Go", type 4), as `go tool buildid` prints it. The
// file must be a regular, executable one, opened without blocking (a FIFO
// of that name does not hang otter) and checked once open (no swap between
// a stat and the open); its note is read only if small.
func buildID(path string) (string, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", path)
	}
	f, err := elf.NewFile(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil || sec.Size > maxBuildIDNote {
		return "", os.ErrNotExist
	}
	data, err := sec.Data()
	if err != nil {
		return "", err
	}
	// namesz, descsz, type; the name padded to 4 bytes; the description.
	if len(data) < 16 {
		return "", os.ErrNotExist
	}
	order := f.ByteOrder
	namesz, descsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	name := data[12:]
	if typ != 4 || namesz != 4 || !bytes.HasPrefix(name, []byte("Go\x00\x00")) || uint64(len(data)) < 16+uint64(descsz) {
		return "", os.ErrNotExist
	}
	return string(data[16 : 16+descsz]), nil
}
