module github.com/hashicorp/terraform-provider-tls/forewarnupstream

go 1.24.8
