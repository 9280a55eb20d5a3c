/** `target` with every method throwing `error()` while `failing()` is true, and working as before otherwise. */
export function failingWhen<T extends object>(target: T, failing: () => boolean, error: () => Error): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver)
      if (typeof value !== 'function') return value
      if (failing()) return async () => { throw error() }
      return value.bind(object)
    }
  })
}
