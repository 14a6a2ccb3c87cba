import type { Interceptor } from "@connectrpc/connect";

/**
 * API_KEY_HEADER is the request header (gRPC metadata) that carries a
 * payhook API key. payhook's REST facade takes the same name as a header or
 * a query parameter.
 */
export const API_KEY_HEADER = "apikey";

/**
 * withApiKey returns an interceptor that sends key in the `apikey` header of
 * every request, for any transport (gRPC, gRPC-Web or Connect):
 *
 *     const transport = createGrpcTransport({
 *       baseUrl: "http://127.0.0.1:9090",
 *       interceptors: [withApiKey(process.env.PAYHOOK_API_KEY!)],
 *     });
 *
 * Public methods (GetInfo, GetPublicKey, EstimateFee, Convert) ignore it.
 * An empty key is refused here, where the mistake is made, rather than as
 * UNAUTHENTICATED on the first call.
 */
export function withApiKey(key: string): Interceptor {
  const value = key.trim();
  if (value === "") {
    throw new TypeError("withApiKey: the API key is empty");
  }
  return (next) => async (req) => {
    req.header.set(API_KEY_HEADER, value);
    return await next(req);
  };
}
