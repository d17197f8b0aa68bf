// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/*
 * Never deployed: the rug pull checker places this code at an unused address (or at the address
 * of a privileged caller: the owner, an admin read from storage, the creator) with eth_call state
 * overrides and calls it, so every trade and privileged call below is simulated against the live
 * token and pool state and then thrown away.
 *
 * Every token call is a low-level call read the way SafeERC20 reads it: success with no return
 * data counts as true. Pre-2018 tokens (mainnet USDT) return nothing from transfer/approve; a
 * typed `returns (bool)` call would revert the whole simulation on them.
 */

interface IRouterV2 {
    function WETH() external view returns (address);
    function getAmountsOut(uint256 amountIn, address[] calldata path) external view returns (uint256[] memory);
    function swapExactETHForTokensSupportingFeeOnTransferTokens(uint256 amountOutMin, address[] calldata path, address to, uint256 deadline) external payable;
    function swapExactTokensForETHSupportingFeeOnTransferTokens(uint256 amountIn, uint256 amountOutMin, address[] calldata path, address to, uint256 deadline) external;
}

library TokenCalls {
    function ok(bool success, bytes memory ret) private pure returns (bool) {
        if (!success) return false;
        if (ret.length == 0) return true;
        if (ret.length < 32) return false;
        return abi.decode(ret, (uint256)) != 0;
    }

    function transfer(address token, address to, uint256 amount) internal returns (bool) {
        (bool success, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        return ok(success, ret);
    }

    function approve(address token, address spender, uint256 amount) internal returns (bool) {
        (bool success, bytes memory ret) = token.call(abi.encodeWithSelector(0x095ea7b3, spender, amount));
        return ok(success, ret);
    }

    function balanceOf(address token, address who) internal view returns (uint256) {
        (bool success, bytes memory ret) = token.staticcall(abi.encodeWithSelector(0x70a08231, who));
        return success && ret.length >= 32 ? abi.decode(ret, (uint256)) : 0;
    }

    function totalSupply(address token) internal view returns (uint256) {
        (bool success, bytes memory ret) = token.staticcall(abi.encodeWithSelector(0x18160ddd));
        return success && ret.length >= 32 ? abi.decode(ret, (uint256)) : 0;
    }
}

/** A fresh token holder: sends tokens on request and reports whether the transfer went through. */
contract ProbeHolder {
    function send(address token, address to, uint256 amount) external returns (bool) {
        uint256 before = TokenCalls.balanceOf(token, to);
        bool sent = TokenCalls.transfer(token, to, amount);
        return sent && TokenCalls.balanceOf(token, to) > before;
    }
}

/**
 * A wallet that buys, passes a tenth on, and sells the rest (all, else half), from the address
 * the code runs at: the probe's own (tx.origin when the call's `from` holds the probe's code, as
 * a real wallet is), a fresh ProbeTrader's (a contract) or a ProbeNewborn's (no code yet), the
 * last two running this code by delegatecall.
 */
abstract contract Trading {
    struct Trade {
        bool buyOk;
        bool transferOk;
        bool sellOk;
        bool sellAllOk;
        uint256 expectedBuy;
        uint256 bought;
        uint256 transferSent;
        uint256 transferReceived;
        uint256 sellAmount;
        uint256 expectedSell;
        uint256 sold;
        /** What left the sender in the transfer: a transfer that debits nothing moved nothing (no tax). */
        uint256 transferDebited;
    }

    receive() external payable {}

    function _quote(address router, uint256 amountIn, address[] memory path) private view returns (uint256 out) {
        try IRouterV2(router).getAmountsOut(amountIn, path) returns (uint256[] memory amounts) {
            out = amounts[amounts.length - 1];
        } catch {}
    }

    function _sell(address router, uint256 amount, address[] memory path) private returns (bool ok) {
        try IRouterV2(router).swapExactTokensForETHSupportingFeeOnTransferTokens(amount, 0, path, address(this), block.timestamp + 600) {
            ok = true;
        } catch {}
    }

    function _trade(address token, address router, address recipient, uint256 value) internal returns (Trade memory t) {
        address weth = IRouterV2(router).WETH();
        address[] memory path = new address[](2);
        path[0] = weth;
        path[1] = token;
        t.expectedBuy = _quote(router, value, path);
        uint256 before = TokenCalls.balanceOf(token, address(this));
        try IRouterV2(router).swapExactETHForTokensSupportingFeeOnTransferTokens{value: value}(0, path, address(this), block.timestamp + 600) {
            t.buyOk = true;
        } catch {}
        uint256 afterBuy = TokenCalls.balanceOf(token, address(this));
        t.bought = afterBuy > before ? afterBuy - before : 0;
        if (!t.buyOk || t.bought == 0) return t;

        t.transferSent = t.bought / 10;
        uint256 recipientBefore = TokenCalls.balanceOf(token, recipient);
        t.transferOk = TokenCalls.transfer(token, recipient, t.transferSent);
        uint256 recipientAfter = TokenCalls.balanceOf(token, recipient);
        t.transferReceived = recipientAfter > recipientBefore ? recipientAfter - recipientBefore : 0;
        uint256 senderAfter = TokenCalls.balanceOf(token, address(this));
        t.transferDebited = afterBuy > senderAfter ? afterBuy - senderAfter : 0;

        TokenCalls.approve(token, router, type(uint256).max);
        path[0] = token;
        path[1] = weth;
        uint256 held = TokenCalls.balanceOf(token, address(this));
        uint256 ethBefore = address(this).balance;
        t.sellAmount = held;
        t.expectedSell = _quote(router, held, path);
        if (_sell(router, held, path)) {
            t.sellOk = true;
            t.sellAllOk = true;
        } else {
            t.sellAmount = held / 2;
            t.expectedSell = _quote(router, held / 2, path);
            t.sellOk = _sell(router, held / 2, path);
        }
        t.sold = address(this).balance - ethBefore;
    }
}

/**
 * A fresh wallet created inside the call (a contract, not tx.origin). It runs the probe's own
 * code (delegatecall to its creator), so the trading code is in the probe once: the probe's code
 * travels in every state override, and nodes cap a request's size.
 */
contract ProbeTrader {
    address private immutable _probe;

    constructor() {
        _probe = msg.sender;
    }

    receive() external payable {}

    fallback() external payable {
        address probe = _probe;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), probe, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) {
                revert(0, returndatasize())
            }
            return(0, returndatasize())
        }
    }
}

/**
 * A fresh wallet that trades in its constructor, while its address has no code yet: a token that
 * treats accounts without code apart (every real wallet has none) shows here what it does to
 * them. It runs the probe's trading code by delegatecall and leaves the encoded result as its
 * runtime code for the probe to read.
 */
contract ProbeNewborn {
    constructor(bytes memory call) payable {
        (bool ok, bytes memory result) = msg.sender.delegatecall(call);
        require(ok);
        assembly {
            return(add(result, 32), mload(result))
        }
    }
}

contract TokenProbe is Trading {
    /** Word the analyzer writes where the call should name the first fresh holder. */
    address private constant HOLDER_PLACEHOLDER = 0x00000000000000000000000000000000a0d1700F;

    struct Privileged {
        bool funded;
        bool callOk;
        int256 supplyDelta;
        int256 holderDelta;
        /** Change of the caller's own balance: a holder credited by the caller's payment is a transfer, not a mint. */
        int256 callerDelta;
        bool holderSendOk;
        bool otherSendOk;
        /** The caller itself could still move tokens after its call. */
        bool callerSendOk;
        /** A fresh wallet traded after the call (only when a router was given). */
        bool traded;
        Trade after_;
    }

    /** Where the holders' own transfers send tokens: an address nobody holds keys to. */
    address private constant SINK = 0x000000000000000000000000000000000000bEEF;

    /**
     * What holders given tokens by a privileged caller can do with them, measured where there is
     * no pool to trade through: the two wallets a token can tell from a real one, as in the trade.
     */
    struct Passing {
        /** The caller could give tokens to both holders. */
        bool funded;
        /** The holder that is tx.origin (the call's `from`, holding the probe's code) passed some on. */
        bool originOk;
        /** A holder without code (a contract in its constructor, not tx.origin) passed some on. */
        bool codelessOk;
    }

    /** Moved = the recipient's balance rose; a transfer's return value is not trusted either way. */
    function _moved(address token, address to, uint256 amount) private returns (bool) {
        uint256 before = TokenCalls.balanceOf(token, to);
        TokenCalls.transfer(token, to, amount);
        return TokenCalls.balanceOf(token, to) > before;
    }

    /** Half of this address's tokens to `to` (all when there is one unit). */
    function _passHalf(address token, address to) private returns (bool) {
        uint256 held = TokenCalls.balanceOf(token, address(this));
        if (held == 0) return false;
        return _moved(token, to, held / 2 > 0 ? held / 2 : held);
    }

    /**
     * Runs at a privileged caller's address with the call's `from` (tx.origin) holding the probe's
     * code too: gives a thousandth of the caller's tokens to the tx.origin wallet and to a wallet
     * without code, and asks each to pass half of them on.
     */
    function passOn(address token) external returns (Passing memory p) {
        uint256 amount = TokenCalls.balanceOf(token, address(this)) / 1000;
        if (amount == 0) return p;
        address origin = tx.origin;
        bool toOrigin = _moved(token, origin, amount);
        bytes memory call = abi.encodeCall(this.receiveAndPass, (token, amount));
        (bool toCodeless, bool codelessOk) = abi.decode(address(new ProbeNewborn(call)).code, (bool, bool));
        p.funded = toOrigin && toCodeless;
        if (!p.funded) return p;
        p.originOk = TokenProbe(payable(origin)).passHalf(token);
        p.codelessOk = codelessOk;
    }

    /** At the tx.origin wallet: passes half its tokens on (msg.sender = tx.origin for the token). */
    function passHalf(address token) external returns (bool) {
        return _passHalf(token, SINK);
    }

    /** In a ProbeNewborn's constructor (by delegatecall): asks its creator for tokens, passes half on. */
    function receiveAndPass(address token, uint256 amount) external returns (bool funded, bool passed) {
        funded = TokenProbe(payable(msg.sender)).give(token, amount);
        if (funded) passed = _passHalf(token, SINK);
    }

    /** At the privileged caller: gives `amount` of its tokens to the wallet asking. */
    function give(address token, uint256 amount) external returns (bool) {
        return _moved(token, msg.sender, amount);
    }

    /** Buy → transfer → sell from a fresh wallet created here; msg.value pays the buy. */
    function trade(address token, address router, address recipient) public payable returns (Trade memory) {
        address trader = address(new ProbeTrader());
        return TokenProbe(payable(trader)).tradeHere{value: msg.value}(token, router, recipient);
    }

    /** Buy → transfer → sell from a fresh wallet that has no code while it trades. */
    function tradeCodeless(address token, address router, address recipient) external payable returns (Trade memory) {
        bytes memory call = abi.encodeCall(this.tradeHere, (token, router, recipient));
        return abi.decode(address(new ProbeNewborn{value: msg.value}(call)).code, (Trade));
    }

    /**
     * Buy → transfer → sell from this address. Called with `from` = this address (its code placed
     * by state override), the trading wallet is tx.origin, as a real wallet is: a token that
     * treats `tx.origin` apart in its trades (refuses a sale when the seller is tx.origin, lets
     * only tx.origin buy) shows here what it does to real wallets.
     */
    function tradeHere(address token, address router, address recipient) external payable returns (Trade memory) {
        return _trade(token, router, recipient, msg.value);
    }

    /** Replaces every 32-byte word equal to the placeholder with `holder`, from byte 4 on. */
    function _bind(bytes memory data, address holder) private pure returns (bytes memory) {
        bytes32 placeholder = bytes32(uint256(uint160(HOLDER_PLACEHOLDER)));
        bytes32 bound = bytes32(uint256(uint160(holder)));
        for (uint256 i = 4; i + 32 <= data.length; i += 32) {
            bytes32 word;
            assembly {
                word := mload(add(add(data, 32), i))
            }
            if (word == placeholder) {
                assembly {
                    mstore(add(add(data, 32), i), bound)
                }
            }
        }
        return data;
    }

    /**
     * Runs at a privileged caller's address: funds two fresh holders, makes one call naming the
     * first holder wherever `data` has the placeholder, then measures what it did to the supply,
     * to that holder's balance, to the holders' and the caller's ability to transfer, and (with a
     * router) whether a fresh wallet can still buy and sell, and at what tax.
     */
    function privileged(address token, bytes memory data, address router, address recipient)
        external
        payable
        returns (Privileged memory p)
    {
        ProbeHolder first = new ProbeHolder();
        ProbeHolder second = new ProbeHolder();
        uint256 amount = TokenCalls.balanceOf(token, address(this)) / 1000;
        if (amount > 0) {
            bool a = TokenCalls.transfer(token, address(first), amount);
            bool b = TokenCalls.transfer(token, address(second), amount);
            p.funded =
                a && b && TokenCalls.balanceOf(token, address(first)) > 1 && TokenCalls.balanceOf(token, address(second)) > 1;
        }
        uint256 supplyBefore = TokenCalls.totalSupply(token);
        uint256 holderBefore = TokenCalls.balanceOf(token, address(first));
        uint256 callerBefore = TokenCalls.balanceOf(token, address(this));
        (p.callOk, ) = token.call(_bind(data, address(first)));
        p.supplyDelta = int256(TokenCalls.totalSupply(token)) - int256(supplyBefore);
        p.holderDelta = int256(TokenCalls.balanceOf(token, address(first))) - int256(holderBefore);
        p.callerDelta = int256(TokenCalls.balanceOf(token, address(this))) - int256(callerBefore);
        if (p.funded) {
            p.holderSendOk = first.send(token, address(0x000000000000000000000000000000000000bEEF), 1);
            p.otherSendOk = second.send(token, address(0x000000000000000000000000000000000000bEEF), 1);
        }
        if (TokenCalls.balanceOf(token, address(this)) > 1) {
            uint256 before = TokenCalls.balanceOf(token, address(0x000000000000000000000000000000000000bEEF));
            TokenCalls.transfer(token, address(0x000000000000000000000000000000000000bEEF), 1);
            p.callerSendOk = TokenCalls.balanceOf(token, address(0x000000000000000000000000000000000000bEEF)) > before;
        }
        if (router != address(0) && msg.value > 0) {
            p.traded = true;
            p.after_ = trade(token, router, recipient);
        }
    }
}
