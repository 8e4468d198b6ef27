package app

import (
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

// builtins returns otter's built-in tools for cfg.
//
// SEAM(webdata): internal/webdata does not build yet; until it does, otter
// runs without built-in tools. Replace the body with webdata.Tools(...)
// once it lands.
func (a *App) builtins(cfg *config.Config) ([]tool.Tool, error) {
	_ = cfg
	return nil, nil
}
