package html

import _ "embed"

// The Vega bundles (scripts/vendor-vega.sh fetches them; assets/VERSIONS
// names their versions) are inlined into every page so that it opens
// offline and makes no request.
var (
	//go:embed assets/vega.min.js
	vegaJS string
	//go:embed assets/vega-lite.min.js
	vegaLiteJS string
	//go:embed assets/vega-embed.min.js
	vegaEmbedJS string
)
