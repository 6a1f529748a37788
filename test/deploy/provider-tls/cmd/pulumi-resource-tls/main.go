// pulumi-resource-tls is the Pulumi TLS provider plugin, bridged from the upstream Terraform provider
// because the Go module proxy does not serve Pulumi's own provider module (docs/e2e.md).
package main

import (
	"context"
	_ "embed"

	pftfbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

	"forewarn.test/provider-tls/provider"
)

// Both files are written by pulumi-tfgen-tls before this binary is built; the committed ones are
// placeholders so the package compiles on its own.
var (
	//go:embed schema.json
	schema []byte
	//go:embed bridge-metadata.json
	bridgeMetadata []byte
)

func main() {
	pftfbridge.Main(context.Background(), "tls", provider.Info(bridgeMetadata),
		pftfbridge.ProviderMetadata{PackageSchema: schema})
}
