// The environment check: what the study needs to know about the participant's screen and browser, in the
// shape studyapp.journey.responses.environment validates: {user_agent, viewport {width, height}, refresh_hz, device,
// dpr, touch, language}. The refresh rate is measured, not guessed: the median interval between
// requestAnimationFrame callbacks over about one second.

/** Median rAF interval over `durationMs` -> refresh rate in Hz (rounded to 0.1). */
export function measureRefreshHz(durationMs = 1000) {
  return new Promise((resolve) => {
    const stamps = [];
    const step = (ts) => {
      stamps.push(ts);
      if (ts - stamps[0] < durationMs || stamps.length < 10) requestAnimationFrame(step);
      else resolve(refreshFromStamps(stamps));
    };
    requestAnimationFrame(step);
  });
}

/** Refresh rate from rAF timestamps: 1000 / the median gap (robust to a few slow frames). */
export function refreshFromStamps(stamps) {
  const gaps = [];
  for (let i = 1; i < stamps.length; i++) gaps.push(stamps[i] - stamps[i - 1]);
  gaps.sort((a, b) => a - b);
  const median = gaps.length ? gaps[Math.floor(gaps.length / 2)] : 1000 / 60;
  return Math.round((1000 / Math.max(median, 1)) * 10) / 10;
}

/**
 * The resolution of performance.now() in ms: the smallest step between successive distinct readings. Engines
 * coarsen it differently (Chromium 0.1 ms, Firefox and Safari 1 ms when the page is not cross-origin isolated),
 * and every painted time in the paint log is read from this clock.
 */
export function timerResolutionMs(now = () => performance.now(), samples = 20, budgetMs = 50) {
  let smallest = Infinity;
  const until = now() + budgetMs;
  let last = now();
  for (let seen = 0; seen < samples;) {
    const t = now();
    if (t !== last) {
      smallest = Math.min(smallest, t - last);
      last = t;
      seen++;
    }
    if (t > until) break;
  }
  return Number.isFinite(smallest) ? Math.round(smallest * 1000) / 1000 : null;
}

/** phone / tablet / desktop from the primary pointer, the screen's size and the user agent. */
export function deviceClass({ coarse, shortSide, longSide, ua }) {
  const mobileUa = /Mobi|iPhone|iPod|Android.*Mobile|Windows Phone/i.test(ua);
  const tabletUa = /iPad|Tablet|Android(?!.*Mobile)|Silk|Kindle/i.test(ua);
  if (mobileUa || (coarse && shortSide < 600)) return "phone";
  if (tabletUa || (coarse && longSide <= 1400)) return "tablet";
  return "desktop";
}

/** Everything the environment step submits: {environment: {...}}. */
export async function measureEnvironment(win = window) {
  const refresh = await measureRefreshHz(1000);
  const coarse = win.matchMedia ? win.matchMedia("(pointer: coarse)").matches : false;
  const scr = win.screen || { width: win.innerWidth, height: win.innerHeight };
  const shortSide = Math.min(scr.width, scr.height);
  const longSide = Math.max(scr.width, scr.height);
  const ua = win.navigator.userAgent || "";
  return {
    environment: {
      user_agent: ua,
      viewport: { width: win.innerWidth, height: win.innerHeight },
      screen: { width: scr.width, height: scr.height },
      refresh_hz: refresh,
      device: deviceClass({ coarse, shortSide, longSide, ua }),
      dpr: win.devicePixelRatio || 1,
      touch: (win.navigator.maxTouchPoints || 0) > 0,
      language: win.navigator.language || "",
      timer_resolution_ms: timerResolutionMs(() => win.performance.now()),
    },
  };
}
