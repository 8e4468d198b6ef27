package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/otter-sh/otter/internal/config"
)

// WatchConfig reloads each time a config file changes while auto_reload
// is on — in the configuration loaded, or in the one on disk now, so that
// turning it on while otter runs takes effect without a restart — and
// reports each reload's outcome to reloaded, until ctx is done. It watches
// the directories (editors replace files rather than write them) and waits
// for a quiet moment before reloading.
func (a *App) WatchConfig(ctx context.Context, reloaded func(ReloadDiff, error)) {
	reload := func(ctx context.Context) {
		if !a.Config().MCP.AutoReload && !a.autoReloadOn() {
			return
		}
		diff, err := a.Reload(ctx)
		reloaded(diff, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.Logger.Warn("auto_reload: cannot watch the config files", "err", err)
		return
	}
	defer w.Close()
	files := map[string]bool{}
	add := func(path string) {
		if path == "" {
			return
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return
		}
		files[abs] = true
		if err := w.Add(filepath.Dir(abs)); err != nil {
			a.Logger.Debug("auto_reload: not watching", "dir", filepath.Dir(abs), "err", err)
		}
	}
	for _, f := range a.Config().Files {
		add(f.Path)
	}
	add(a.Paths.UserConfigFile())
	add(a.opts.ConfigFile)
	if dir := config.ProjectDir(a.WorkDir); dir != "" {
		add(filepath.Join(dir, ".otter", "config.toml"))
		add(filepath.Join(dir, ".otter", "config.local.toml"))
		add(filepath.Join(dir, ".mcp.json"))
	}

	const quiet = 300 * time.Millisecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if abs, _ := filepath.Abs(ev.Name); files[abs] {
				timer.Reset(quiet)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			a.Logger.Warn("auto_reload: watching the config", "err", err)
		case <-timer.C:
			reload(ctx)
		}
	}
}

// autoReloadOn reports whether the config as it is on disk now asks for
// auto_reload (false when it does not load).
func (a *App) autoReloadOn() bool {
	cfg, err := a.load()
	return err == nil && cfg.MCP.AutoReload
}
