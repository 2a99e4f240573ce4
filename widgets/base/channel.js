// @ts-check
/**
 * A request/response channel over anywidget custom messages.
 *
 * Request (front end -> kernel):  {id, type, ...payload}
 * Response (kernel -> front end): {id, ok: true, result} | {id, ok: false, error: {type, message}}
 *
 * Every view of a model gets its own channel with its own id prefix, so two views of one
 * widget never take each other's responses. Messages without a pending id are ignored.
 */

/** An error the kernel reported for a request (its Python exception type and message). */
export class ChannelError extends Error {
  /** @param {{type?: string, message?: string} | string | undefined} error */
  constructor(error) {
    const e = typeof error === "string" ? { message: error } : error || {};
    super(e.message || "request failed");
    this.name = "ChannelError";
    /** @type {string} */
    this.type = e.type || "Error";
  }
}

let channels = 0;

/**
 * @param {{on: Function, off: Function, send: Function}} model  the anywidget model
 * @param {{timeout?: number}} [options]  milliseconds before a request fails (default 60 s)
 */
export function createChannel(model, options = {}) {
  const timeout = options.timeout ?? 60000;
  const prefix = `v${++channels}-${Math.random().toString(36).slice(2, 8)}-`;
  let next = 0;
  /** @type {Map<string, {resolve: Function, reject: Function, timer: any}>} */
  const pending = new Map();

  /** @param {any} msg */
  function onMessage(msg) {
    if (!msg || typeof msg !== "object" || typeof msg.id !== "string") return;
    const waiting = pending.get(msg.id);
    if (!waiting) return; // another view's request, or one that timed out
    pending.delete(msg.id);
    clearTimeout(waiting.timer);
    if (msg.ok) waiting.resolve(msg.result);
    else waiting.reject(new ChannelError(msg.error));
  }
  model.on("msg:custom", onMessage);

  return {
    /**
     * Send `{id, type, ...payload}` and resolve with the kernel's `result`.
     * @param {string} type
     * @param {Record<string, any>} [payload]
     * @returns {Promise<any>}
     */
    request(type, payload = {}) {
      const id = prefix + ++next;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new ChannelError({ type: "Timeout", message: `no reply to ${type} in ${timeout / 1000} s` }));
        }, timeout);
        pending.set(id, { resolve, reject, timer });
        model.send({ ...payload, id, type });
      });
    },
    /** How many requests wait for a reply. */
    get pending() {
      return pending.size;
    },
    /** Stop listening; pending requests fail. */
    dispose() {
      model.off("msg:custom", onMessage);
      for (const [, w] of pending) {
        clearTimeout(w.timer);
        w.reject(new ChannelError({ type: "Closed", message: "the view was closed" }));
      }
      pending.clear();
    },
  };
}
