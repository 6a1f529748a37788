package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

//go:embed run_python.py
var pythonRunner []byte

// pythonExecutable is the virtualenv's interpreter (runtime option `virtualenv`, relative to the
// project root) or python3 from PATH.
func pythonExecutable(info *pulumirpc.ProgramInfo) string {
	virtualenv := runtimeOption(info, "virtualenv")
	if virtualenv == "" {
		return "python3"
	}
	if !filepath.IsAbs(virtualenv) && info != nil {
		virtualenv = filepath.Join(info.RootDirectory, virtualenv)
	}
	return filepath.Join(virtualenv, "bin", "python")
}

func (h *host) runPython(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	runner, err := os.CreateTemp("", "forewarn-run-python-*.py")
	if err != nil {
		return nil, err
	}
	defer os.Remove(runner.Name())
	if _, err := runner.Write(pythonRunner); err != nil {
		return nil, err
	}
	if err := runner.Close(); err != nil {
		return nil, err
	}
	rootDirectory := ""
	if req.Info != nil {
		rootDirectory = req.Info.RootDirectory
	}
	args := []string{
		"-u", runner.Name(),
		"--monitor=" + req.MonitorAddress,
		"--engine=" + h.engineAddress,
		"--project=" + req.Project,
		"--stack=" + req.Stack,
		"--organization=" + req.Organization,
		"--root_directory=" + rootDirectory,
		"--pwd=" + req.Pwd,
		"--parallel=" + strconv.Itoa(int(req.Parallel)),
		"--dry_run=" + strconv.FormatBool(req.DryRun),
		programPath(req.Info, req.Program),
	}
	env, err := configEnvironment(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, pythonExecutable(req.Info), args...)
	cmd.Dir = req.Pwd
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	return runResult(cmd.Run())
}

// installPythonDependencies pip-installs requirements.txt into the project's virtualenv.
func (h *host) installPythonDependencies(
	req *pulumirpc.InstallDependenciesRequest, stream pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	directory := req.Directory
	if req.Info != nil && req.Info.RootDirectory != "" {
		directory = req.Info.RootDirectory
	}
	requirements := filepath.Join(directory, "requirements.txt")
	if _, err := os.Stat(requirements); err != nil {
		return nil
	}
	cmd := exec.CommandContext(stream.Context(), pythonExecutable(req.Info),
		"-m", "pip", "install", "--disable-pip-version-check", "-r", requirements)
	cmd.Dir = directory
	output, err := cmd.CombinedOutput()
	if sendErr := stream.Send(&pulumirpc.InstallDependenciesResponse{Stdout: output}); sendErr != nil {
		return sendErr
	}
	if err != nil {
		return fmt.Errorf("pip install -r %s failed: %w", requirements, err)
	}
	return nil
}

// generatePythonPackage writes a Python SDK for a schema with the CLI's own code generator.
func generatePythonPackage(req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	loader, err := schema.NewLoaderClient(req.LoaderTarget)
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.Schema), &spec); err != nil {
		return nil, fmt.Errorf("reading the package schema: %w", err)
	}
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	files, err := python.GeneratePackage("pulumi-language-python", pkg, req.ExtraFiles, loader)
	if err != nil {
		return nil, err
	}
	for name, content := range files {
		path := filepath.Join(req.Directory, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{}, nil
}

// linkPythonPackages adds each generated SDK's directory to requirements.txt (pip installs it from there).
func linkPythonPackages(req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	if req.Info == nil {
		return nil, fmt.Errorf("link needs the program's directories")
	}
	requirements := filepath.Join(req.Info.RootDirectory, "requirements.txt")
	existing, err := os.ReadFile(requirements)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(existing), "\n"), "\n")
	imports := []string{}
	for _, dependency := range req.Packages {
		entry := "./" + filepath.ToSlash(dependency.Path)
		found := false
		for _, line := range lines {
			found = found || strings.TrimSpace(line) == entry
		}
		if !found {
			lines = append(lines, entry)
		}
		imports = append(imports, "import pulumi_"+strings.ReplaceAll(dependency.Package.GetName(), "-", "_"))
	}
	content := strings.TrimLeft(strings.Join(lines, "\n"), "\n") + "\n"
	if err := os.WriteFile(requirements, []byte(content), 0o644); err != nil {
		return nil, err
	}
	return &pulumirpc.LinkResponse{ImportInstructions: strings.Join(imports, "\n")}, nil
}
