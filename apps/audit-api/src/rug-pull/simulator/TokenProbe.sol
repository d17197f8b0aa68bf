// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/*
 * Never deployed: the rug pull checker places this code at an unused address (or at the token
 * owner's address) with eth_call state overrides and calls it, so every trade and privileged
 * call below is simulated against the live token and pool state and then thrown away.
 */

interface IToken {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
    function transfer(address, uint256) external returns (bool);
    function approve(address, uint256) external returns (bool);
}

interface IRouterV2 {
    function WETH() external view returns (address);
    function getAmountsOut(uint256 amountIn, address[] calldata path) external view returns (uint256[] memory);
    function swapExactETHForTokensSupportingFeeOnTransferTokens(uint256 amountOutMin, address[] calldata path, address to, uint256 deadline) external payable;
    function swapExactTokensForETHSupportingFeeOnTransferTokens(uint256 amountIn, uint256 amountOutMin, address[] calldata path, address to, uint256 deadline) external;
}

/** A fresh token holder: sends tokens on request and reports whether the transfer went through. */
contract ProbeHolder {
    function send(address token, address to, uint256 amount) external returns (bool ok) {
        try IToken(token).transfer(to, amount) returns (bool result) {
            ok = result;
        } catch {
            ok = false;
        }
    }
}

contract TokenProbe {
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
    }

    struct Privileged {
        bool funded;
        bool callOk;
        int256 supplyDelta;
        int256 holderDelta;
        bool holderSendOk;
        bool otherSendOk;
    }

    receive() external payable {}

    function _bal(address token, address who) private view returns (uint256 b) {
        try IToken(token).balanceOf(who) returns (uint256 v) {
            b = v;
        } catch {}
    }

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

    /** Buy with msg.value, pass a tenth to a fresh account, then sell the rest (all, else half). */
    function trade(address token, address router, address recipient) external payable returns (Trade memory t) {
        address weth = IRouterV2(router).WETH();
        address[] memory path = new address[](2);
        path[0] = weth;
        path[1] = token;
        t.expectedBuy = _quote(router, msg.value, path);
        uint256 before = _bal(token, address(this));
        try IRouterV2(router).swapExactETHForTokensSupportingFeeOnTransferTokens{value: msg.value}(0, path, address(this), block.timestamp + 600) {
            t.buyOk = true;
        } catch {}
        uint256 afterBuy = _bal(token, address(this));
        t.bought = afterBuy > before ? afterBuy - before : 0;
        if (!t.buyOk || t.bought == 0) return t;

        t.transferSent = t.bought / 10;
        uint256 recipientBefore = _bal(token, recipient);
        try IToken(token).transfer(recipient, t.transferSent) returns (bool ok) {
            t.transferOk = ok;
        } catch {}
        uint256 recipientAfter = _bal(token, recipient);
        t.transferReceived = recipientAfter > recipientBefore ? recipientAfter - recipientBefore : 0;

        try IToken(token).approve(router, type(uint256).max) returns (bool) {} catch {}
        path[0] = token;
        path[1] = weth;
        uint256 held = _bal(token, address(this));
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

    /**
     * Runs at the owner's address: funds two fresh holders, makes one owner call naming the first
     * holder, then measures what it did to the supply, to that holder's balance and to the
     * holders' ability to transfer (only the first: blacklist; both: pause).
     */
    function privileged(address token, bytes4 selector) external returns (Privileged memory p) {
        ProbeHolder first = new ProbeHolder();
        ProbeHolder second = new ProbeHolder();
        uint256 amount = _bal(token, address(this)) / 1000;
        if (amount > 0) {
            bool a;
            bool b;
            try IToken(token).transfer(address(first), amount) returns (bool ok) {
                a = ok;
            } catch {}
            try IToken(token).transfer(address(second), amount) returns (bool ok) {
                b = ok;
            } catch {}
            p.funded = a && b && _bal(token, address(first)) > 1 && _bal(token, address(second)) > 1;
        }
        uint256 supplyBefore = IToken(token).totalSupply();
        uint256 holderBefore = _bal(token, address(first));
        (p.callOk, ) = token.call(abi.encodeWithSelector(selector, address(first), uint256(1)));
        p.supplyDelta = int256(IToken(token).totalSupply()) - int256(supplyBefore);
        p.holderDelta = int256(_bal(token, address(first))) - int256(holderBefore);
        if (p.funded) {
            p.holderSendOk = first.send(token, address(0x000000000000000000000000000000000000bEEF), 1);
            p.otherSendOk = second.send(token, address(0x000000000000000000000000000000000000bEEF), 1);
        }
    }
}
