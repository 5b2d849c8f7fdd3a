package importer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is a transcript file found by Find.
type File struct {
	Path string
	Size int64
}

// Find lists the transcript files under paths: a file is taken as it is,
// a folder is searched (recursively, without following links) for *.jsonl
// files. Files come in path order, except that Claude Code subagent files
// (agent-*.jsonl) come after all others, so a subagent's parent session is
// usually imported before it. A path that does not exist is an error; a
// file or folder inside one that cannot be read is skipped and reported
// through warn.
func Find(paths []string, warn func(error)) ([]File, error) {
	var files []File
	seen := make(map[string]bool)
	add := func(path string, size int64) {
		if !seen[path] {
			seen[path] = true
			files = append(files, File{Path: path, Size: size})
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", root, err)
		}
		if !info.IsDir() {
			add(filepath.Clean(root), info.Size())
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root {
					return err
				}
				warn(fmt.Errorf("skipping %s: %w", path, err))
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				warn(fmt.Errorf("skipping %s: %w", path, err))
				return nil
			}
			add(path, info.Size())
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read the folder %s: %w", root, err)
		}
	}
	sort.SliceStable(files, func(i, j int) bool {
		ai, aj := isAgentFile(files[i].Path), isAgentFile(files[j].Path)
		if ai != aj {
			return aj
		}
		return files[i].Path < files[j].Path
	})
	return files, nil
}

// isAgentFile reports whether path is a Claude Code subagent transcript.
func isAgentFile(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-")
}
