"""payhook's gRPC client for Python.

``payhook.Client`` opens one channel to a payhook server and exposes a typed
stub per service (generated from proto/payhook/v1 into ``payhook.v1``); the
API key travels as the ``apikey`` metadata of every call, added by a client
interceptor, so no call site can forget it. ``payhook.webhooks`` verifies the
callbacks and webhooks payhook sends.

    import payhook
    from payhook.v1 import address_pb2

    with payhook.Client("127.0.0.1:9090", api_key) as client:
        created = client.address.CreateAddress(
            address_pb2.CreateAddressRequest(ticker="btc", callback="https://shop.example/ipn"),
            timeout=10,
        )
"""

from __future__ import annotations

import collections
from typing import Optional, Sequence, Tuple

import grpc

from payhook.v1 import (
    address_pb2_grpc,
    delivery_pb2_grpc,
    devnet_pb2_grpc,
    export_pb2_grpc,
    merchant_pb2_grpc,
    operator_pb2_grpc,
    payout_pb2_grpc,
    project_pb2_grpc,
    refund_pb2_grpc,
    subscription_pb2_grpc,
)

__all__ = ["Client", "API_KEY_METADATA"]

#: API_KEY_METADATA is the gRPC metadata key the server reads the API key
#: from (server/interceptor.APIKeyMetadata).
API_KEY_METADATA = "apikey"


class _CallDetails(
    collections.namedtuple(
        "_CallDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    """_CallDetails is grpc.ClientCallDetails with its fields settable at
    construction: grpc.ClientCallDetails itself is an abstract interface."""


class _APIKeyInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """_APIKeyInterceptor adds the apikey metadata to every call, of every
    kind (WatchDeliveries is a server stream), unless the caller set one."""

    def __init__(self, api_key: str):
        self._api_key = api_key

    def _details(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        metadata = list(details.metadata or ())
        if any(k.lower() == API_KEY_METADATA for k, _ in metadata):
            return details  # a per-call key wins (e.g. another project's)
        metadata.append((API_KEY_METADATA, self._api_key))
        return _CallDetails(
            details.method,
            details.timeout,
            metadata,
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)


class Client:
    """Client is a connection to a payhook server's gRPC API.

    target is the server's gRPC address ("host:port"). api_key is sent with
    every call; None or "" sends none (the public methods: GetInfo,
    GetPublicKey, EstimateFee, Convert, and the devnet of a --dev server).
    Without credentials the channel is plaintext, which suits a server on
    loopback or behind a private network only: over any other network pass
    grpc.ssl_channel_credentials(), or the key travels in clear. options are
    grpc channel options. The client is a context manager; close() closes
    the channel.

    Each attribute is the generated stub of one service; every method takes
    the request message and grpc's keyword arguments (timeout, metadata...).
    """

    def __init__(
        self,
        target: str,
        api_key: Optional[str],
        *,
        credentials: Optional[grpc.ChannelCredentials] = None,
        options: Optional[Sequence[Tuple[str, object]]] = None,
    ):
        if credentials is None:
            channel = grpc.insecure_channel(target, options=options)
        else:
            channel = grpc.secure_channel(target, credentials, options=options)
        self._raw = channel
        if api_key:
            channel = grpc.intercept_channel(channel, _APIKeyInterceptor(api_key))
        self.channel = channel
        #: address is the low-level API: payment addresses, logs, public key, info.
        self.address = address_pb2_grpc.AddressServiceStub(channel)
        #: delivery streams delivery events (WatchDeliveries).
        self.delivery = delivery_pb2_grpc.DeliveryServiceStub(channel)
        #: devnet pays, mines and reorganises the simulated chains of a --dev server.
        self.devnet = devnet_pb2_grpc.DevnetServiceStub(channel)
        #: checkout is the merchant API's invoices.
        self.checkout = merchant_pb2_grpc.CheckoutServiceStub(channel)
        #: deposit is the merchant API's open-amount deposits.
        self.deposit = merchant_pb2_grpc.DepositServiceStub(channel)
        #: notification resends, tests and lists merchant notifications.
        self.notification = merchant_pb2_grpc.NotificationServiceStub(channel)
        #: payout is the project's payout wallet, balance, payout requests and payouts.
        self.payout = payout_pb2_grpc.PayoutServiceStub(channel)
        #: refund refunds invoice payments and handles wrong-asset payments.
        self.refund = refund_pb2_grpc.RefundServiceStub(channel)
        #: export streams the project's accounting export (ExportLedger: the file's parts).
        self.export = export_pb2_grpc.ExportServiceStub(channel)
        #: subscription is the merchant API's subscriptions.
        self.subscription = subscription_pb2_grpc.SubscriptionServiceStub(channel)
        #: project manages projects, secrets and wallets.
        self.project = project_pb2_grpc.ProjectServiceStub(channel)
        #: operator lists held funds and payout requests (operator keys only).
        self.operator = operator_pb2_grpc.OperatorServiceStub(channel)

    def close(self) -> None:
        """close closes the channel; calls in flight are cancelled."""
        self._raw.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
