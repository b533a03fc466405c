/**
 * The limits of the internal channel, each defined here once. The frame limit holds in both
 * directions: the host client hands the one it uses to the bootstrap in its configuration
 * (src/host/bootstrap-config.ts), which the bootstrap checks its own frames against.
 */

/** largest frame either way, in bytes: 16 MiB (a tool result of several MB fits) */
export const DEFAULT_FRAME_LIMIT_BYTES = 16 * 1024 * 1024;
/** requests in flight at once; one more is refused (CHANNEL_OVERFLOW) */
export const DEFAULT_MAX_PENDING_REQUESTS = 1024;
/** unsettled event deliveries before reading pauses (it resumes at half) */
export const DEFAULT_MAX_PENDING_DELIVERIES = 64;
/** unwritten output, in frame limits, above which requests are refused */
export const WRITE_BUFFER_FRAMES = 2;
