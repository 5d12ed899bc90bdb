// The study's device requirements, checked on the consent page before anything is recorded. Mirrors
// studyapp.journey.responses.environment_refusal (the server checks again when the answer arrives).

/** Why `env` ({device, viewport, refresh_hz}) does not meet `limits`: "device", "viewport", "refresh" or null. */
export function refusalOf(limits, env) {
  const devices = limits.devices || [];
  if (devices.length && !devices.includes(env.device)) return "device";
  const mv = limits.min_viewport || {};
  if (env.viewport.width < (mv.width || 0) || env.viewport.height < (mv.height || 0)) return "viewport";
  if (env.refresh_hz < (limits.min_refresh_hz || 0)) return "refresh";
  return null;
}
