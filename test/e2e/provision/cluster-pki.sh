# Sourced by cluster.sh: the throw-away cluster's certificates and kubeconfigs (openssl, ECDSA P-256,
# valid 7 days). See docs/e2e.md.
# shellcheck shell=bash
# ---------------------------------------------------------------- certificates
generate_certificates() { # pki-dir
  local pki=$1
  mkdir -p "$pki" && chmod 700 "$pki"
  local key_options=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

  openssl req -x509 "${key_options[@]}" -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 7 \
    -subj "/CN=forewarn-e2e-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

  sign_leaf() { # name subject extensions
    openssl req -new "${key_options[@]}" -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "$2" 2>/dev/null
    printf '%s\n' "$3" >"$pki/$1.ext"
    openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 7 -sha256 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
    rm -f "$pki/$1.csr" "$pki/$1.ext"
  }

  sign_leaf apiserver "/CN=kube-apiserver" "$(
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1"
  )"
  # The controller-manager's own identity, bound by the API server's bootstrap RBAC policy.
  sign_leaf controller-manager "/CN=system:kube-controller-manager" "$(
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth"
  )"
  # O=system:masters: the admin user bypasses RBAC, like a cluster-admin kubeconfig.
  sign_leaf admin "/O=system:masters/CN=forewarn-e2e-admin" "$(
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth"
  )"

  # Service-account token signing key pair (ES256).
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/service-account.key" 2>/dev/null
  openssl ec -in "$pki/service-account.key" -pubout -out "$pki/service-account.pub" 2>/dev/null

  # A static bearer token for the same admin identity (handy for raw HTTPS requests).
  local token
  token=$(openssl rand -hex 24)
  printf '%s,forewarn-e2e-admin-token,forewarn-e2e-admin-token,"system:masters"\n' "$token" >"$pki/tokens.csv"
  printf '%s' "$token" >"$pki/admin.token"
  chmod 600 "$pki"/*.key "$pki/tokens.csv" "$pki/admin.token"
}

write_kubeconfig() { # path server pki-dir [client certificate name, default admin]
  local ca client_cert client_key identity=${4:-admin}
  ca=$(base64 -w0 <"$3/ca.crt")
  client_cert=$(base64 -w0 <"$3/$identity.crt")
  client_key=$(base64 -w0 <"$3/$identity.key")
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: forewarn-e2e
    cluster:
      server: $2
      certificate-authority-data: $ca
users:
  - name: forewarn-e2e-$identity
    user:
      client-certificate-data: $client_cert
      client-key-data: $client_key
contexts:
  - name: forewarn-e2e
    context:
      cluster: forewarn-e2e
      user: forewarn-e2e-$identity
      namespace: default
current-context: forewarn-e2e
EOF
  chmod 600 "$1"
}
