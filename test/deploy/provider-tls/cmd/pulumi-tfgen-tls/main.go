// pulumi-tfgen-tls writes the Pulumi package schema of the bridged TLS provider
// (`pulumi-tfgen-tls schema --skip-examples --out DIR`), which pulumi-resource-tls then embeds.
package main

import (
	pftfgen "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfgen"

	"forewarn.test/provider-tls/provider"
)

func main() { pftfgen.Main("tls", provider.Info(nil)) }
