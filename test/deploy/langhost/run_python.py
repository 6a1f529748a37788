# Runs a Pulumi Python program for the deploy tier's language host (langhost/python.go): configures the
# `pulumi` package's runtime from the arguments and the PULUMI_CONFIG environment, then runs the
# program's __main__.py inside the stack resource. Exit code 32 means "already reported to the engine".
import argparse
import asyncio
import os
import runpy
import sys
import traceback

import pulumi
from pulumi.runtime import config, settings, stack

REPORTED = 32


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for name in ("monitor", "engine", "project", "stack", "organization", "root_directory", "pwd"):
        parser.add_argument(f"--{name}", default="")
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--dry_run", default="false")
    parser.add_argument("program")
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    if arguments.pwd:
        os.chdir(arguments.pwd)
    settings.configure(
        settings.Settings(
            project=arguments.project,
            stack=arguments.stack,
            monitor=arguments.monitor,
            engine=arguments.engine,
            parallel=arguments.parallel,
            dry_run=arguments.dry_run == "true",
            organization=arguments.organization or "organization",
            root_directory=arguments.root_directory or None,
        )
    )
    config.set_all_config(config.get_config_env(), list(config.get_config_secret_keys_env()))

    program = os.path.abspath(arguments.program)
    program_dir = program if os.path.isdir(program) else os.path.dirname(program)
    sys.path.insert(0, program_dir)

    def run_program() -> None:
        runpy.run_path(program, run_name="__main__")

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(stack.run_in_stack(run_program))
    except pulumi.RunError as error:
        pulumi.log.error(str(error))
        return REPORTED
    except Exception:  # noqa: BLE001 every failure of the program is reported to the engine
        pulumi.log.error(f"Program failed with an unhandled exception:\n{traceback.format_exc()}")
        return REPORTED
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
