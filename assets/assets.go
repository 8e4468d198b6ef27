// Package assets holds the files shipped inside the otter binary.
package assets

import "embed"

// Presets holds presets/*.json: the named extraction presets that
// scrape_page accepts (see internal/webdata for the format).
//
//go:embed presets/*.json
var Presets embed.FS
