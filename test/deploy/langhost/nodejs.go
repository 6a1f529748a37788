package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// The exit code @pulumi/pulumi's runners use after they reported the error themselves.
const exitAfterLoggedError = 32

// locateSDKModule finds a file of the program's @pulumi/pulumi the way Pulumi's own Node host does:
// Node's own resolution (require.resolve) run from the program directory, so node_modules is found in
// that directory or any above it, and NODE_PATH, symlinked and hoisted installs work as they do for
// the program itself.
func locateSDKModule(ctx context.Context, programDirectory, module string) (string, error) {
	script := "process.stdout.write(require.resolve(process.argv[1]))"
	cmd := exec.CommandContext(ctx, "node", "-e", script, module)
	cmd.Dir = programDirectory
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "Cannot find module") {
			return "", fmt.Errorf("it looks like the Pulumi SDK is not installed: no %s resolves from %s; "+
				"run npm install (or yarn install) in the program's directory", module, programDirectory)
		}
		return "", fmt.Errorf("could not resolve %s from %s: %v: %s", module, programDirectory, err,
			strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// programDirectory is where the program lives: Pulumi.yaml's folder, or the folder `main:` names (the
// engine's ProgramDirectory); older engines send only the working directory.
func programDirectory(info *pulumirpc.ProgramInfo, pwd string) string {
	if info != nil && info.ProgramDirectory != "" {
		return info.ProgramDirectory
	}
	return pwd
}

// entryPoint is the program argument of @pulumi/pulumi's runner: the file `main:` names, relative to
// the program directory, or "." when there is none, which makes the runner take package.json's
// `exports` or `main` (else index.js/index.ts), exactly as under Pulumi's own host.
func entryPoint(info *pulumirpc.ProgramInfo, program string) string {
	if info != nil && info.EntryPoint != "" {
		return info.EntryPoint
	}
	if program != "" {
		return program
	}
	return "."
}

// configEnvironment is how the engine's configuration reaches the SDKs: PULUMI_CONFIG and
// PULUMI_CONFIG_SECRET_KEYS, both JSON.
func configEnvironment(req *pulumirpc.RunRequest) ([]string, error) {
	values := req.Config
	if values == nil {
		values = map[string]string{} // the SDKs parse PULUMI_CONFIG as an object, never null
	}
	config, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	secretKeys := req.ConfigSecretKeys
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secrets, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	return []string{"PULUMI_CONFIG=" + string(config), "PULUMI_CONFIG_SECRET_KEYS=" + string(secrets)}, nil
}

// runResult turns the program's exit into the engine's answer.
func runResult(err error) (*pulumirpc.RunResponse, error) {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == exitAfterLoggedError:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exitErr):
		return &pulumirpc.RunResponse{
			Error: "Program exited with non-zero exit code: " + strconv.Itoa(exitErr.ExitCode()),
		}, nil
	default:
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
}

func (h *host) runNodejs(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	directory := programDirectory(req.Info, req.Pwd)
	runner, err := locateSDKModule(ctx, directory, "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	// Pulumi.yaml's runtime.options.nodeargs go to node before the runner, as with Pulumi's own host.
	args := strings.Fields(runtimeOption(req.Info, "nodeargs"))
	args = append(args,
		runner,
		"--monitor="+req.MonitorAddress,
		"--engine="+h.engineAddress,
		"--project="+req.Project,
		"--stack="+req.Stack,
		"--pwd="+directory,
		"--organization="+req.Organization,
		"--parallel="+strconv.Itoa(int(req.Parallel)),
	)
	if req.Info != nil && req.Info.RootDirectory != "" {
		args = append(args, "--root-directory="+req.Info.RootDirectory)
	}
	if req.DryRun {
		args = append(args, "--dry-run")
	}
	args = append(args, entryPoint(req.Info, req.Program))
	args = append(args, req.Args...)

	env, err := configEnvironment(req)
	if err != nil {
		return nil, err
	}
	env = append(env, typeScriptEnvironment(req.Info)...)

	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = directory
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	return runResult(cmd.Run())
}

// typeScriptEnvironment passes Pulumi.yaml's runtime options to the SDK's runner, which registers the
// TypeScript support it ships (ts-node, or the program's own typescript and ts-node when installed):
// `typescript` (a boolean, on by default) and `tsconfig` (the file ts-node reads; default tsconfig.json
// in the program directory).
func typeScriptEnvironment(info *pulumirpc.ProgramInfo) []string {
	typescript := "true"
	if info != nil && info.Options != nil {
		if value, ok := info.Options.Fields["typescript"]; ok {
			typescript = strconv.FormatBool(value.GetBoolValue())
		}
	}
	env := []string{"PULUMI_NODEJS_TYPESCRIPT=" + typescript}
	if tsconfig := runtimeOption(info, "tsconfig"); tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+tsconfig)
	}
	return env
}

// streamWriter forwards a child's output to the engine as RunPlugin messages.
type streamWriter struct {
	stream pulumirpc.LanguageRuntime_RunPluginServer
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	chunk := append([]byte(nil), p...)
	var response pulumirpc.RunPluginResponse
	if w.stderr {
		response.Output = &pulumirpc.RunPluginResponse_Stderr{Stderr: chunk}
	} else {
		response.Output = &pulumirpc.RunPluginResponse_Stdout{Stdout: chunk}
	}
	if err := w.stream.Send(&response); err != nil {
		return 0, err
	}
	return len(p), nil
}

// runNodejsPlugin runs a source-based component plugin (or a policy pack, below): @pulumi/pulumi's run-plugin loads the
// directory's package.json entry and hosts the components it exports; the engine reads the provider's
// port from the streamed standard output.
func runNodejsPlugin(req *pulumirpc.RunPluginRequest, stream pulumirpc.LanguageRuntime_RunPluginServer) error {
	directory := req.Program
	if req.Info != nil && req.Info.ProgramDirectory != "" {
		directory = req.Info.ProgramDirectory
	}
	// A Node.js policy pack (`pulumi preview --policy-pack DIR`) comes as kind "analyzer": as Pulumi's own
	// host does, it runs @pulumi/pulumi's run-policy-pack with the engine's arguments first and the pack's
	// folder last, in the pack's folder (@pulumi/policy reads the pack's version from ./package.json).
	module, analyzer := "@pulumi/pulumi/cmd/run-plugin", req.Kind == "analyzer"
	if analyzer {
		module = "@pulumi/pulumi/cmd/run-policy-pack"
	}
	runner, err := locateSDKModule(stream.Context(), directory, module)
	if err != nil {
		return err
	}
	args := append([]string{runner, directory}, req.Args...)
	if analyzer {
		args = append(append([]string{runner}, req.Args...), directory)
	}
	cmd := exec.CommandContext(stream.Context(), "node", args...)
	cmd.Dir = directory
	if req.Pwd != "" && !analyzer {
		cmd.Dir = req.Pwd
	}
	cmd.Env = append(os.Environ(), req.Env...)
	cmd.Stdout = streamWriter{stream: stream}
	cmd.Stderr = streamWriter{stream: stream, stderr: true}
	code := int32(0)
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return err
		}
		code = int32(exitErr.ExitCode())
	}
	return stream.Send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: code}})
}

var _ io.Writer = streamWriter{}
