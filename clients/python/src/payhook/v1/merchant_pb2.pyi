from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from payhook.v1 import address_pb2 as _address_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetCheckoutAddressRequest(_message.Message):
    __slots__ = ["coin", "payment_id"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    coin: str
    payment_id: str
    def __init__(self, payment_id: _Optional[str] = ..., coin: _Optional[str] = ...) -> None: ...

class GetCheckoutAddressResponse(_message.Message):
    __slots__ = ["address_in", "coin", "currency", "exchange_rate", "expires_at", "minimum_transaction_coin", "payment_uri", "value_coin"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_TRANSACTION_COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_URI_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    coin: str
    currency: str
    exchange_rate: str
    expires_at: int
    minimum_transaction_coin: str
    payment_uri: str
    value_coin: str
    def __init__(self, address_in: _Optional[str] = ..., coin: _Optional[str] = ..., value_coin: _Optional[str] = ..., exchange_rate: _Optional[str] = ..., currency: _Optional[str] = ..., expires_at: _Optional[int] = ..., payment_uri: _Optional[str] = ..., minimum_transaction_coin: _Optional[str] = ...) -> None: ...

class GetCheckoutLogsRequest(_message.Message):
    __slots__ = ["payment_id"]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    payment_id: str
    def __init__(self, payment_id: _Optional[str] = ...) -> None: ...

class GetCheckoutLogsResponse(_message.Message):
    __slots__ = ["addresses", "amount_due", "amount_due_fiat", "currency", "due_coin", "expires_at", "invoice_status", "late_payments", "notifications", "notify_url", "overpaid_amount", "overpaid_amount_fiat", "paid_amount_fiat", "payment_id", "payments", "underpaid_tolerance", "value"]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_DUE_FIAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_DUE_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    DUE_COIN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    INVOICE_STATUS_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    OVERPAID_AMOUNT_FIAT_FIELD_NUMBER: _ClassVar[int]
    OVERPAID_AMOUNT_FIELD_NUMBER: _ClassVar[int]
    PAID_AMOUNT_FIAT_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    addresses: _containers.RepeatedCompositeFieldContainer[InvoiceAddress]
    amount_due: str
    amount_due_fiat: str
    currency: str
    due_coin: str
    expires_at: int
    invoice_status: str
    late_payments: str
    notifications: _containers.RepeatedCompositeFieldContainer[Notification]
    notify_url: str
    overpaid_amount: str
    overpaid_amount_fiat: str
    paid_amount_fiat: str
    payment_id: str
    payments: _containers.RepeatedCompositeFieldContainer[InvoicePayment]
    underpaid_tolerance: str
    value: str
    def __init__(self, payment_id: _Optional[str] = ..., invoice_status: _Optional[str] = ..., value: _Optional[str] = ..., currency: _Optional[str] = ..., notify_url: _Optional[str] = ..., expires_at: _Optional[int] = ..., paid_amount_fiat: _Optional[str] = ..., addresses: _Optional[_Iterable[_Union[InvoiceAddress, _Mapping]]] = ..., payments: _Optional[_Iterable[_Union[InvoicePayment, _Mapping]]] = ..., notifications: _Optional[_Iterable[_Union[Notification, _Mapping]]] = ..., underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ..., amount_due_fiat: _Optional[str] = ..., amount_due: _Optional[str] = ..., overpaid_amount_fiat: _Optional[str] = ..., overpaid_amount: _Optional[str] = ..., due_coin: _Optional[str] = ...) -> None: ...

class GetDepositAddressRequest(_message.Message):
    __slots__ = ["coin", "payment_id"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    coin: str
    payment_id: str
    def __init__(self, payment_id: _Optional[str] = ..., coin: _Optional[str] = ...) -> None: ...

class GetDepositAddressResponse(_message.Message):
    __slots__ = ["address_in", "coin", "currency", "exchange_rate", "expires_at", "minimum_transaction_coin", "payment_uri", "value_coin"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_TRANSACTION_COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_URI_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    coin: str
    currency: str
    exchange_rate: str
    expires_at: int
    minimum_transaction_coin: str
    payment_uri: str
    value_coin: str
    def __init__(self, address_in: _Optional[str] = ..., coin: _Optional[str] = ..., value_coin: _Optional[str] = ..., exchange_rate: _Optional[str] = ..., currency: _Optional[str] = ..., expires_at: _Optional[int] = ..., payment_uri: _Optional[str] = ..., minimum_transaction_coin: _Optional[str] = ...) -> None: ...

class GetDepositLogsRequest(_message.Message):
    __slots__ = ["payment_id"]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    payment_id: str
    def __init__(self, payment_id: _Optional[str] = ...) -> None: ...

class GetDepositLogsResponse(_message.Message):
    __slots__ = ["addresses", "currency", "expires_at", "invoice_status", "notifications", "notify_url", "paid_amount_fiat", "payment_id", "payments", "value"]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    INVOICE_STATUS_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    PAID_AMOUNT_FIAT_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    addresses: _containers.RepeatedCompositeFieldContainer[InvoiceAddress]
    currency: str
    expires_at: int
    invoice_status: str
    notifications: _containers.RepeatedCompositeFieldContainer[Notification]
    notify_url: str
    paid_amount_fiat: str
    payment_id: str
    payments: _containers.RepeatedCompositeFieldContainer[InvoicePayment]
    value: str
    def __init__(self, payment_id: _Optional[str] = ..., invoice_status: _Optional[str] = ..., value: _Optional[str] = ..., currency: _Optional[str] = ..., notify_url: _Optional[str] = ..., expires_at: _Optional[int] = ..., paid_amount_fiat: _Optional[str] = ..., addresses: _Optional[_Iterable[_Union[InvoiceAddress, _Mapping]]] = ..., payments: _Optional[_Iterable[_Union[InvoicePayment, _Mapping]]] = ..., notifications: _Optional[_Iterable[_Union[Notification, _Mapping]]] = ...) -> None: ...

class InvoiceAddress(_message.Message):
    __slots__ = ["address_in", "coin", "exchange_rate", "expires_at", "value_coin"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    coin: str
    exchange_rate: str
    expires_at: int
    value_coin: str
    def __init__(self, coin: _Optional[str] = ..., address_in: _Optional[str] = ..., value_coin: _Optional[str] = ..., exchange_rate: _Optional[str] = ..., expires_at: _Optional[int] = ...) -> None: ...

class InvoicePayment(_message.Message):
    __slots__ = ["coin", "confirmations", "created_at", "hold_reason", "paid_amount", "paid_amount_fiat", "payment_status", "received_amount", "txid_in", "txid_out"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    PAID_AMOUNT_FIAT_FIELD_NUMBER: _ClassVar[int]
    PAID_AMOUNT_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AMOUNT_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    TXID_OUT_FIELD_NUMBER: _ClassVar[int]
    coin: str
    confirmations: int
    created_at: _timestamp_pb2.Timestamp
    hold_reason: str
    paid_amount: str
    paid_amount_fiat: str
    payment_status: str
    received_amount: str
    txid_in: str
    txid_out: str
    def __init__(self, coin: _Optional[str] = ..., txid_in: _Optional[str] = ..., txid_out: _Optional[str] = ..., paid_amount: _Optional[str] = ..., paid_amount_fiat: _Optional[str] = ..., received_amount: _Optional[str] = ..., payment_status: _Optional[str] = ..., confirmations: _Optional[int] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., hold_reason: _Optional[str] = ...) -> None: ...

class ListNotificationsRequest(_message.Message):
    __slots__ = ["cursor", "limit", "status"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    limit: int
    status: str
    def __init__(self, status: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListNotificationsResponse(_message.Message):
    __slots__ = ["next_cursor", "notifications"]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    next_cursor: str
    notifications: _containers.RepeatedCompositeFieldContainer[Notification]
    def __init__(self, notifications: _Optional[_Iterable[_Union[Notification, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class Notification(_message.Message):
    __slots__ = ["attempts", "created_at", "deadline", "event_type", "logs", "next_attempt_at", "status", "url", "uuid"]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    created_at: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    event_type: str
    logs: _containers.RepeatedCompositeFieldContainer[_address_pb2.DeliveryAttempt]
    next_attempt_at: _timestamp_pb2.Timestamp
    status: str
    url: str
    uuid: str
    def __init__(self, uuid: _Optional[str] = ..., event_type: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., url: _Optional[str] = ..., logs: _Optional[_Iterable[_Union[_address_pb2.DeliveryAttempt, _Mapping]]] = ...) -> None: ...

class RequestCheckoutRequest(_message.Message):
    __slots__ = ["convert", "currency", "email", "expire_at", "item_description", "json", "late_payments", "notify_url", "post", "redirect_url", "underpaid_tolerance", "value"]
    CONVERT_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_AT_FIELD_NUMBER: _ClassVar[int]
    ITEM_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    POST_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_URL_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    convert: bool
    currency: str
    email: str
    expire_at: int
    item_description: str
    json: bool
    late_payments: str
    notify_url: str
    post: bool
    redirect_url: str
    underpaid_tolerance: str
    value: str
    def __init__(self, redirect_url: _Optional[str] = ..., notify_url: _Optional[str] = ..., value: _Optional[str] = ..., currency: _Optional[str] = ..., item_description: _Optional[str] = ..., expire_at: _Optional[int] = ..., post: bool = ..., json: bool = ..., convert: bool = ..., underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ..., email: _Optional[str] = ...) -> None: ...

class RequestCheckoutResponse(_message.Message):
    __slots__ = ["expires_at", "late_payments", "payment_id", "payment_url", "success_token", "underpaid_tolerance"]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_URL_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_TOKEN_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    expires_at: int
    late_payments: str
    payment_id: str
    payment_url: str
    success_token: str
    underpaid_tolerance: str
    def __init__(self, payment_id: _Optional[str] = ..., payment_url: _Optional[str] = ..., success_token: _Optional[str] = ..., expires_at: _Optional[int] = ..., underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ...) -> None: ...

class RequestDepositRequest(_message.Message):
    __slots__ = ["convert", "currency", "item_description", "json", "notify_url", "post"]
    CONVERT_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    ITEM_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    POST_FIELD_NUMBER: _ClassVar[int]
    convert: bool
    currency: str
    item_description: str
    json: bool
    notify_url: str
    post: bool
    def __init__(self, notify_url: _Optional[str] = ..., currency: _Optional[str] = ..., item_description: _Optional[str] = ..., post: bool = ..., json: bool = ..., convert: bool = ...) -> None: ...

class RequestDepositResponse(_message.Message):
    __slots__ = ["payment_id", "payment_url"]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_URL_FIELD_NUMBER: _ClassVar[int]
    payment_id: str
    payment_url: str
    def __init__(self, payment_id: _Optional[str] = ..., payment_url: _Optional[str] = ...) -> None: ...

class ResendNotificationRequest(_message.Message):
    __slots__ = ["uuid"]
    UUID_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    def __init__(self, uuid: _Optional[str] = ...) -> None: ...

class ResendNotificationResponse(_message.Message):
    __slots__ = ["notification"]
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    notification: Notification
    def __init__(self, notification: _Optional[_Union[Notification, _Mapping]] = ...) -> None: ...

class TestNotificationRequest(_message.Message):
    __slots__ = ["url"]
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class TestNotificationResponse(_message.Message):
    __slots__ = ["uuid"]
    UUID_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    def __init__(self, uuid: _Optional[str] = ...) -> None: ...
