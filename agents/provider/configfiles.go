package provider

import "path/filepath"

// ConfigFiles are the config files LoadConfig reads, in merge order: the user's, then the
// workspace's (either may be missing).
func ConfigFiles(workspace, userConfigDir string) []string {
	var files []string
	if userConfigDir != "" {
		files = append(files, filepath.Join(userConfigDir, "config.yaml"))
	}
	if workspace != "" {
		files = append(files, filepath.Join(workspace, ".summit", "config.yaml"))
	}
	return files
}
