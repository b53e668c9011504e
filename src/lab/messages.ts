/**
 * Redfish error bodies for the lab, built from messages of the DMTF Base message registry
 * (DSP8011, `Base.1.11`), in the shape DSP0266 §"Error responses" requires:
 *
 * ```json
 * {"error": {"code": "Base.1.11.GeneralError", "message": "...",
 *            "@Message.ExtendedInfo": [{"MessageId": "Base.1.11.X", "Message": "...", ...}]}}
 * ```
 *
 * Message texts are written from the registry's message formats (`%1`, `%2` substituted).
 */

/** Registry prefix and version of every message id the lab emits. */
export const BASE_REGISTRY = 'Base.1.11';

interface MessageDef {
  readonly format: string;
  readonly severity: 'OK' | 'Warning' | 'Critical';
  readonly resolution: string;
}

const MESSAGES = {
  GeneralError: {
    format: 'A general error has occurred. See Resolution for information on how to resolve the error.',
    severity: 'Critical',
    resolution: 'None.',
  },
  NoValidSession: {
    format: 'There is no valid session established with the implementation.',
    severity: 'Critical',
    resolution: 'Establish a session before attempting any operations.',
  },
  ResourceMissingAtURI: {
    format: 'The resource at the URI %1 was not found.',
    severity: 'Critical',
    resolution: 'Place a valid resource at the URI or correct the URI and resubmit the request.',
  },
  MalformedJSON: {
    format: 'The request body submitted was malformed JSON and could not be parsed by the receiving service.',
    severity: 'Critical',
    resolution: 'Ensure that the request body is valid JSON and resubmit the request.',
  },
  PropertyValueNotInList: {
    format: 'The value %1 for the property %2 is not in the list of acceptable values.',
    severity: 'Warning',
    resolution:
      'Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.',
  },
  PropertyValueOutOfRange: {
    format: 'The value %1 for the property %2 is not in the supported range of acceptable values.',
    severity: 'Warning',
    resolution: 'Correct the value for the property in the request body and resubmit the request if the operation failed.',
  },
  PropertyValueConflict: {
    format: 'The property %1 could not be written because its value would conflict with the value of the %2 property.',
    severity: 'Warning',
    resolution: 'No resolution is required.',
  },
  ResourceInUse: {
    format: 'The change to the requested resource failed because the resource is in use or in transition.',
    severity: 'Warning',
    resolution: 'Remove the condition and resubmit the request if the operation failed.',
  },
  PropertyValueTypeError: {
    format: 'The value %1 for the property %2 is of a different type than the property can accept.',
    severity: 'Warning',
    resolution: 'Correct the value for the property in the request body and resubmit the request if the operation failed.',
  },
  PropertyUnknown: {
    format: 'The property %1 is not in the list of valid properties for the resource.',
    severity: 'Warning',
    resolution: 'Remove the unknown property from the request body and resubmit the request if the operation failed.',
  },
  PropertyNotWritable: {
    format: 'The property %1 is a read only property and cannot be assigned a value.',
    severity: 'Warning',
    resolution: 'Remove the property from the request body and resubmit the request if the operation failed.',
  },
  PropertyMissing: {
    format: 'The property %1 is a required property and must be included in the request.',
    severity: 'Warning',
    resolution: 'Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed.',
  },
  ActionParameterMissing: {
    format: 'The action %1 requires the parameter %2 to be present in the request body.',
    severity: 'Critical',
    resolution: 'Supply the action with the required parameter in the request body when the request is resubmitted.',
  },
  ActionParameterValueNotInList: {
    format: 'The value %1 for the parameter %2 in the action %3 is not in the list of acceptable values.',
    severity: 'Warning',
    resolution:
      'Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.',
  },
  ActionParameterValueTypeError: {
    format: 'The value %1 for the parameter %2 in the action %3 is of a different type than the parameter can accept.',
    severity: 'Warning',
    resolution: 'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
  },
  ActionParameterValueFormatError: {
    format: 'The value %1 for the parameter %2 in the action %3 is of a different format than the parameter can accept.',
    severity: 'Warning',
    resolution: 'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
  },
  ActionParameterValueError: {
    format: 'The value for the parameter %1 in the action %2 is invalid.',
    severity: 'Warning',
    resolution: 'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
  },
  CouldNotEstablishConnection: {
    format: 'The service failed to establish a connection with the URI %1.',
    severity: 'Critical',
    resolution: 'Ensure that the URI contains a valid and reachable node name, protocol information and other URI components.',
  },
  ActionNotSupported: {
    format: 'The action %1 is not supported by the resource.',
    severity: 'Critical',
    resolution:
      'The action supplied cannot be resubmitted to the implementation. Perhaps the action was invalid, the wrong resource was the target or the implementation documentation may be of assistance.',
  },
  PreconditionFailed: {
    format: 'The ETag supplied did not match the ETag required to change this resource.',
    severity: 'Critical',
    resolution: 'Try the operation again using the appropriate ETag.',
  },
  OperationNotAllowed: {
    format: 'The HTTP method is not allowed on this resource.',
    severity: 'Critical',
    resolution: 'None.',
  },
  InternalError: {
    format: 'The request failed due to an internal service error.  The service is still operational.',
    severity: 'Critical',
    resolution: 'Resubmit the request.  If the problem persists, consider resetting the service.',
  },
} as const satisfies Record<string, MessageDef>;

/** Key of a message the lab emits (`Base.1.11.<key>`). */
export type RedfishMessageKey = keyof typeof MESSAGES;

/** One entry of `@Message.ExtendedInfo` (Message schema v1.1). */
export interface RedfishMessage {
  readonly '@odata.type': string;
  readonly MessageId: string;
  readonly Message: string;
  readonly MessageArgs: readonly string[];
  readonly Severity: string;
  readonly MessageSeverity: string;
  readonly Resolution: string;
  readonly RelatedProperties?: readonly string[];
}

/** Builds a registry message with its arguments substituted into the message format. */
export function redfishMessage(key: RedfishMessageKey, args: readonly string[] = [], related: readonly string[] = []): RedfishMessage {
  const def: MessageDef = MESSAGES[key];
  const text = def.format.replace(/%(\d+)/g, (_m, n: string) => args[Number(n) - 1] ?? '');
  return {
    '@odata.type': '#Message.v1_1_1.Message',
    MessageId: `${BASE_REGISTRY}.${key}`,
    Message: text,
    MessageArgs: args,
    Severity: def.severity,
    MessageSeverity: def.severity,
    Resolution: def.resolution,
    ...(related.length > 0 ? { RelatedProperties: related } : {}),
  };
}

/**
 * A Redfish error body: `code` is `Base.1.11.GeneralError` (DSP0266: the general error code when
 * the details are in the extended info), `message` repeats the first message's text.
 */
export function redfishError(messages: readonly RedfishMessage[]): { error: Record<string, unknown> } {
  return {
    error: {
      code: `${BASE_REGISTRY}.GeneralError`,
      message: messages[0]?.Message ?? MESSAGES.GeneralError.format,
      '@Message.ExtendedInfo': messages,
    },
  };
}
