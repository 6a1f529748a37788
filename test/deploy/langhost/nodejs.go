package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// The exit code @pulumi/pulumi's runners use after they reported the error themselves.
const exitAfterLoggedError = 32

// findPulumiSDKFile looks for node_modules/@pulumi/pulumi/<file> from dir upwards, as Node resolves it.
func findPulumiSDKFile(dir, file string) (string, error) {
	for current := dir; ; current = filepath.Dir(current) {
		candidate := filepath.Join(current, "node_modules", "@pulumi", "pulumi", file)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
		if filepath.Dir(current) == current {
			return "", fmt.Errorf("no node_modules/@pulumi/pulumi/%s above %s: run npm ci", file, dir)
		}
	}
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
	program := programPath(req.Info, req.Program)
	runner, err := findPulumiSDKFile(filepath.Dir(program), "cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	args := []string{
		runner,
		"--monitor=" + req.MonitorAddress,
		"--engine=" + h.engineAddress,
		"--project=" + req.Project,
		"--stack=" + req.Stack,
		"--pwd=" + req.Pwd,
		"--organization=" + req.Organization,
		"--parallel=" + strconv.Itoa(int(req.Parallel)),
	}
	if req.Info != nil && req.Info.RootDirectory != "" {
		args = append(args, "--root-directory="+req.Info.RootDirectory)
	}
	if req.DryRun {
		args = append(args, "--dry-run")
	}
	args = append(args, program)
	args = append(args, req.Args...)

	env, err := configEnvironment(req)
	if err != nil {
		return nil, err
	}
	// Pulumi.yaml's runtime.options.typescript (a boolean) turns ts-node off; it is on by default.
	typescript := "true"
	if req.Info != nil && req.Info.Options != nil {
		if value, ok := req.Info.Options.Fields["typescript"]; ok {
			typescript = strconv.FormatBool(value.GetBoolValue())
		}
	}
	env = append(env, "PULUMI_NODEJS_TYPESCRIPT="+typescript)

	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = req.Pwd
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	return runResult(cmd.Run())
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

// runNodejsPlugin runs a source-based component plugin: @pulumi/pulumi's run-plugin loads the
// directory's package.json entry and hosts the components it exports; the engine reads the provider's
// port from the streamed standard output.
func runNodejsPlugin(req *pulumirpc.RunPluginRequest, stream pulumirpc.LanguageRuntime_RunPluginServer) error {
	directory := req.Program
	if req.Info != nil && req.Info.ProgramDirectory != "" {
		directory = req.Info.ProgramDirectory
	}
	runner, err := findPulumiSDKFile(directory, "cmd/run-plugin")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(stream.Context(), "node", append([]string{runner, directory}, req.Args...)...)
	cmd.Dir = directory
	if req.Pwd != "" {
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
