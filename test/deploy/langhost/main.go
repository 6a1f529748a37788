// A minimal Pulumi language host for the deploy tier: one binary serving the `nodejs` and `python`
// runtimes (chosen by the name it is started as: pulumi-language-nodejs or pulumi-language-python).
//
// Why it exists: Pulumi's own language hosts are Go modules of their own that the Go module proxy
// reachable here does not serve (403 for every version), while the CLI (pkg/v3) and the SDK (sdk/v3)
// are served. This host implements what `pulumi up/preview/refresh/destroy`, `pulumi package add` and
// source-based component plugins need, and nothing else:
//   - Run: starts the program with the language SDK's own runner (@pulumi/pulumi/cmd/run; for Python a
//     small runner script embedded below, driving the `pulumi` package's runtime). For Node.js it does
//     what Pulumi's own host does: the SDK is resolved by Node from the program directory (so a program
//     folder with its own node_modules works, wherever it is), the entry point is `main:` or "." (the
//     runner then takes package.json's `main`), TypeScript runs through the SDK's ts-node support, and
//     runtime options typescript, tsconfig and nodeargs are honoured;
//   - RunPlugin (nodejs): runs a source-based component plugin with @pulumi/pulumi/cmd/run-plugin, and a
//     policy pack (kind "analyzer", `pulumi preview --policy-pack`) with @pulumi/pulumi/cmd/run-policy-pack;
//   - GeneratePackage and Link (python): the CLI's own Python code generator (pkg/v3/codegen/python),
//     then a requirements.txt entry; InstallDependencies (python) pip-installs requirements.txt.
//
// Everything else answers "unimplemented", which the engine tolerates for these commands.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is set at build time to the Pulumi version the host was built against.
var version = "3.0.0"

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	runtime       string
	engineAddress string
}

func main() {
	runtime := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	if runtime != "nodejs" && runtime != "python" {
		fmt.Fprintf(os.Stderr, "start this binary as pulumi-language-nodejs or pulumi-language-python (got %s)\n", os.Args[0])
		os.Exit(2)
	}
	// The engine passes its own address as the last argument (flags such as -tracing may precede it).
	engineAddress := ""
	for _, arg := range os.Args[1:] {
		if !strings.HasPrefix(arg, "-") {
			engineAddress = arg
		}
	}
	server := &host{runtime: runtime, engineAddress: engineAddress}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, server)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "could not start the language host: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of standard output.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "language host stopped: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.EngineAddress != "" {
		h.engineAddress = req.EngineAddress
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPackages returns nothing: providers are found on PATH when a resource first needs them.
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetProgramDependencies(
	context.Context, *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	return &pulumirpc.AboutResponse{Executable: h.runtime}, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if h.runtime == "python" {
		return h.runPython(ctx, req)
	}
	return h.runNodejs(ctx, req)
}

func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, stream pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	if h.runtime == "python" {
		return h.installPythonDependencies(req, stream)
	}
	// Node.js projects here are installed by `npm ci` before the tier runs.
	return nil
}

func (h *host) GeneratePackage(
	ctx context.Context, req *pulumirpc.GeneratePackageRequest,
) (*pulumirpc.GeneratePackageResponse, error) {
	if h.runtime != "python" {
		return nil, fmt.Errorf("this test language host generates Python SDKs only")
	}
	return generatePythonPackage(req)
}

func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	if h.runtime != "python" {
		return nil, fmt.Errorf("this test language host links Python SDKs only")
	}
	return linkPythonPackages(req)
}

func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, stream pulumirpc.LanguageRuntime_RunPluginServer) error {
	if h.runtime != "nodejs" {
		return fmt.Errorf("this test language host runs Node.js plugins only")
	}
	return runNodejsPlugin(req, stream)
}

// runtimeOption reads a string option of Pulumi.yaml's runtime.options.
func runtimeOption(info *pulumirpc.ProgramInfo, name string) string {
	if info == nil || info.Options == nil {
		return ""
	}
	if value, ok := info.Options.Fields[name]; ok {
		return value.GetStringValue()
	}
	return ""
}

// programPath is the program to run: the entry point inside the program directory.
func programPath(info *pulumirpc.ProgramInfo, fallback string) string {
	if info == nil || info.ProgramDirectory == "" {
		return fallback
	}
	return filepath.Join(info.ProgramDirectory, info.EntryPoint)
}
