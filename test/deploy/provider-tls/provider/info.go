// Package provider describes the bridged TLS provider: the upstream Terraform provider under the
// Pulumi package name `tls`, at the version of the @pulumi/tls SDK it pairs with.
package provider

import (
	"context"

	pftfbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"

	"github.com/hashicorp/terraform-provider-tls/forewarnupstream"
)

// Version is the @pulumi/tls version this binary serves; build-tools.sh overrides it with -ldflags -X
// so the binary and the SDK of package-lock.json always agree.
var Version = "5.3.0"

// Info is the bridge's description of the provider. Tokens are computed, not listed: every Terraform
// name tls_foo_bar becomes tls:index/fooBar:FooBar, the tokens the @pulumi/tls SDK uses.
func Info(metadata []byte) tfbridge.ProviderInfo {
	info := tfbridge.ProviderInfo{
		P:            pftfbridge.ShimProviderWithContext(context.Background(), upstream.New()),
		Name:         "tls",
		Version:      Version,
		DisplayName:  "TLS",
		Publisher:    "Pulumi",
		License:      "Apache-2.0",
		Repository:   "https://github.com/pulumi/pulumi-tls",
		GitHubOrg:    "hashicorp",
		MetadataInfo: tfbridge.NewProviderMetadata(metadata),
	}
	info.MustComputeTokens(tokens.SingleModule("tls_", "index", tokens.MakeStandard("tls")))
	return info
}
