package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildGateway compiles cmd/gateway into dir and returns the binary's path.
func BuildGateway(ctx context.Context, dir string) (string, error) {
	return BuildCommand(ctx, dir, "gateway")
}

// BuildCommand compiles ./cmd/NAME into dir and returns the binary's path.
// It needs the go tool and the module's source: it looks for the stormsim
// go.mod from the working directory up.
func BuildCommand(ctx context.Context, dir, name string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %v: %s", name, err, lastLine(out))
	}
	return bin, nil
}

// moduleRoot is the nearest directory at or above the working directory
// whose go.mod declares module stormsim.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n"); err == nil && strings.TrimSpace(first) == "module stormsim" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot build the gateway outside the stormsim source tree: pass --gateway-bin")
		}
		dir = parent
	}
}
