package atomicfile

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// WriteYAML writes v to path as YAML, atomically (see Write).
func WriteYAML(path string, v any, perm os.FileMode) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return Write(path, data, perm)
}

// ReplaceYAML writes v to path as YAML, atomically but not durably (see
// Replace).
func ReplaceYAML(path string, v any, perm os.FileMode) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return Replace(path, data, perm)
}

// ReadYAML reads the YAML record at path into v. A missing file is an
// error wrapping fs.ErrNotExist; one that does not parse names the file.
func ReadYAML(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
