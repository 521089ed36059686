module github.com/parleyhq/parley

go 1.26.0

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/google/uuid v1.6.0
	github.com/openai/openai-go/v3 v3.95.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	golang.org/x/text v0.43.0 // indirect
)
