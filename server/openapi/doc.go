// Package openapi serves payhook's OpenAPI 3.1 document of the REST API
// (GET /openapi.json) and a reference page rendered from it (GET /docs/),
// both embedded in the binary: the page is plain HTML and one stylesheet,
// no script and nothing from another origin, under a Content-Security-Policy
// that allows nothing else.
//
// The document is generated (scripts/generate.sh: protoc-gen-connect-openapi
// on the protos, then tools/openapi/postprocess) into
// gen/openapi/payhook.openapi.json and copied here for embedding; a test
// fails when the copy differs. This package's tests also start a server and
// check every operation of the document against real answers, and run
// Redocly's linter on it.
package openapi
