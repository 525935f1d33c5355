/**
 * The request-validation error catalog.
 *
 * Every code here is a 400 `invalid_request_error`; the `param` names the field in JS-path form
 * (`messages[2].role`) so clients can point at it. Codes are stable: clients and tests match on
 * them, while the messages are free to improve.
 */

import { Errors, defineError } from '../errors.js';

const T = 'invalid_request_error';

export const ValidationErrors = {
  missingRequiredParameter: defineError(400, T, 'missing_required_parameter', 'A required parameter is missing.'),
  invalidType: defineError(400, T, 'invalid_type', 'A parameter has the wrong type.'),
  valueBelowMinimum: defineError(400, T, 'value_below_minimum', 'A parameter is below its minimum.'),
  valueAboveMaximum: defineError(400, T, 'value_above_maximum', 'A parameter is above its maximum.'),
  tooFewItems: defineError(400, T, 'too_few_items', 'An array parameter has too few items.'),
  tooManyItems: defineError(400, T, 'too_many_items', 'An array parameter has too many items.'),
  stringTooLong: defineError(400, T, 'string_too_long', 'A string parameter is too long.'),
  tooManyProperties: defineError(400, T, 'too_many_properties', 'An object parameter has too many properties.'),
  invalidValue: defineError(400, T, 'invalid_value', 'A parameter has a value that is not allowed.'),
  unknownParameter: defineError(400, T, 'unknown_parameter', 'A field is not part of this resource.'),
  invalidParameterCombination: defineError(
    400,
    T,
    'invalid_parameter_combination',
    'Two parameters cannot be used together this way.',
  ),
  /** `invalid_body` is a core code (the body parser uses it too); re-exported, not redefined, so it stays unique. */
  invalidBody: Errors.invalidBody,
} as const;
