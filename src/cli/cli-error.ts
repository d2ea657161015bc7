/** A problem the user can fix: printed to stderr without a stack, exit code 2 for usage, 1 otherwise. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string, usage: string) {
    super(`${message}\n\n${usage}`, 2);
    this.name = 'UsageError';
  }
}
