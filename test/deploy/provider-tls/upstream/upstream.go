// Package upstream hands the Terraform TLS provider's plugin-framework constructor to the bridge.
//
// The constructor lives in the upstream module's internal/provider package, which Go lets only
// packages under github.com/hashicorp/terraform-provider-tls/ import. Go decides that by import path,
// so this tiny module takes a path under that prefix (and is wired in with a replace in ../go.mod).
package upstream

import (
	framework "github.com/hashicorp/terraform-plugin-framework/provider"
	tls "github.com/hashicorp/terraform-provider-tls/internal/provider"
)

// New returns the upstream provider, exactly as its own main.go serves it to Terraform.
func New() framework.Provider { return tls.New() }
