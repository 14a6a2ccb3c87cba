from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class MineRequest(_message.Message):
    __slots__ = ["blocks", "ticker"]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    blocks: int
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., blocks: _Optional[int] = ...) -> None: ...

class MineResponse(_message.Message):
    __slots__ = ["height"]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    height: int
    def __init__(self, height: _Optional[int] = ...) -> None: ...

class PayRequest(_message.Message):
    __slots__ = ["address_in", "fail_execution", "ticker", "value_coin"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    FAIL_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    fail_execution: bool
    ticker: str
    value_coin: str
    def __init__(self, ticker: _Optional[str] = ..., address_in: _Optional[str] = ..., value_coin: _Optional[str] = ..., fail_execution: bool = ...) -> None: ...

class PayResponse(_message.Message):
    __slots__ = ["txid_in"]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    txid_in: str
    def __init__(self, txid_in: _Optional[str] = ...) -> None: ...

class ReorgRequest(_message.Message):
    __slots__ = ["depth", "ticker"]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    depth: int
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., depth: _Optional[int] = ...) -> None: ...

class ReorgResponse(_message.Message):
    __slots__ = ["height"]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    height: int
    def __init__(self, height: _Optional[int] = ...) -> None: ...
