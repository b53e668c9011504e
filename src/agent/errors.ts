/**
 * Errors of the deploy agent, shaped like ironic-python-agent's `RESTError`s: a class name
 * (`type`), an HTTP-like `code`, a short `message` and human `details`. A failed command's
 * `command_error` is {@link AgentCommandError.serialize}'s object, and the command API answers
 * request errors with the WSME-like `{"faultcode", "faultstring"}` body
 * (`ironic_python_agent/api/app.py`).
 */

/** A failure the agent reports; `type` is the IPA exception class name it stands for. */
export class AgentCommandError extends Error {
  /** The short message alone (IPA's `message`); `Error.message` also holds the details. */
  readonly summary: string;

  /**
   * @param type IPA's class name, e.g. `ImageChecksumError`, `InvalidCommandParamsError`
   * @param code HTTP-like status (400 caller error, 409 busy, 500 agent-side failure)
   * @param message short message, e.g. `Error verifying image checksum`
   * @param details what exactly went wrong (never a secret)
   */
  constructor(
    readonly type: string,
    readonly code: number,
    message: string,
    readonly details: string,
  ) {
    super(details === '' ? message : `${message}: ${details}`);
    this.name = type;
    this.summary = message;
  }

  /** The `command_error` object: `{type, code, message, details}`, `message` the short one as IPA sends it. */
  serialize(): { type: string; code: number; message: string; details: string } {
    return { type: this.type, code: this.code, message: this.summary, details: this.details };
  }
}

/** Bad command parameters (IPA `InvalidCommandParamsError`, 400). */
export function invalidParams(details: string): AgentCommandError {
  return new AgentCommandError('InvalidCommandParamsError', 400, 'Invalid command parameters', details);
}

/** An image that could not be downloaded (IPA `ImageDownloadError`, 500). */
export function imageDownloadError(details: string): AgentCommandError {
  return new AgentCommandError('ImageDownloadError', 500, 'Error downloading image', details);
}

/** An image whose checksum does not match (IPA `ImageChecksumError`, 500). */
export function imageChecksumError(details: string): AgentCommandError {
  return new AgentCommandError('ImageChecksumError', 500, 'Error verifying image checksum', details);
}

/** An image that could not be written to the disk (IPA `ImageWriteError`, 500). */
export function imageWriteError(details: string): AgentCommandError {
  return new AgentCommandError('ImageWriteError', 500, 'Error writing image to device', details);
}

/** A config drive that could not be built or written (IPA `InstanceDeployFailure`, 500). */
export function configDriveError(details: string): AgentCommandError {
  return new AgentCommandError('InstanceDeployFailure', 500, 'Error writing the config drive', details);
}

/** A clean step that failed (IPA `CleaningError`, 500). */
export function cleaningError(details: string): AgentCommandError {
  return new AgentCommandError('CleaningError', 500, 'Clean step failed', details);
}

/** Any thrown value as an {@link AgentCommandError} (unexpected errors become `CommandExecutionError`). */
export function asCommandError(err: unknown): AgentCommandError {
  if (err instanceof AgentCommandError) return err;
  const details = err instanceof Error ? err.message : String(err);
  return new AgentCommandError('CommandExecutionError', 500, 'Command execution failed', details);
}
